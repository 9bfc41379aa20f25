"""Local models for tests that run no model: the published Qwen2.5-Coder-1.5B's identity and chat template.

`tests/fixtures/qwen2.5-coder-chat-template.jinja` is the template the model file carries (its
``tokenizer.chat_template``); `test_chat_template.py` checks it still is, where the file is there.
"""
from __future__ import annotations


from course_utils.backend.local.chat_template import ChatTemplate
from course_utils.backend.local.model_file import LocalModel
from course_utils.backend.provision.models import DEFAULT_MODEL, MODELS, model_path
from helpers.paths import FIXTURES

QWEN_TEMPLATE = FIXTURES / "qwen2.5-coder-chat-template.jinja"
QWEN_SPECIALS = ("<|endoftext|>", "<|im_end|>")
"""The file's BOS and EOS tokens: BOS is the first the prompt does not contain, so it ends every piece."""
SENTINEL = QWEN_SPECIALS[0]


def qwen_model(context: int = 8192) -> LocalModel:
    """Qwen2.5-Coder-1.5B as `model_file.load_model` describes it, without reading the file."""
    spec = MODELS[DEFAULT_MODEL]
    template = ChatTemplate(QWEN_TEMPLATE.read_text(), model=spec.display, bos_token="<|endoftext|>",
                            eos_token="<|im_end|>", special_tokens=QWEN_SPECIALS)
    return LocalModel(choice=DEFAULT_MODEL, name=spec.display, path=model_path(DEFAULT_MODEL), sha256=spec.sha256,
                      context=context, template=template, template_origin="the file")


def render_qwen(messages: list[dict]) -> tuple[str, list[int]]:
    """The prompt text and checkpoints Qwen2.5-Coder's template gives `messages`."""
    prompt = qwen_model().template.prompt(messages)
    return prompt.text, prompt.cuts
