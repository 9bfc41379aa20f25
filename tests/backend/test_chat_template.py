"""Any GGUF chat model: its header (`gguf`), its chat template (`chat_template`) and how it is chosen (`model_file`).

The fast tests write small GGUF headers of their own; the `model` tests read the published files.
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
from helpers.chat_models import QWEN_TEMPLATE, render_qwen
from google.genai import errors

from course_utils.backend.local import model_file
from course_utils.backend.local.chat_template import ChatTemplate, TemplateError
from course_utils.backend.provision.gguf import NotAModelFile, model_facts, read_metadata
from course_utils.backend.local.model_file import NoChatTemplate, display_name, load_model
from course_utils.backend.provision.models import MODELS, ModelFileMissing, model_path
from course_utils.selection.faults import describe_error

GEMMA = (Path(model_file.__file__).parent / "templates" / "gemma.jinja").read_text()


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, metadata: dict, version: int = 3) -> Path:
    """A GGUF file holding only a header: strings, ints, a bool, and arrays of strings or ints."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, 0, len(metadata)))
    for key, value in metadata.items():
        out += _string(key)
        if isinstance(value, bool):
            out += struct.pack("<I?", 7, value)
        elif isinstance(value, int):
            out += struct.pack("<Iq", 11, value)
        elif isinstance(value, str):
            out += struct.pack("<I", 8) + _string(value)
        elif value and isinstance(value[0], str):
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_string(v) for v in value)
        else:
            out += struct.pack("<IIQ", 9, 5, len(value)) + b"".join(struct.pack("<i", v) for v in value)
    path.write_bytes(bytes(out) + b"\0" * 64)  # where the tensors would start
    return path


def chat_file(tmp_path: Path, template: str | None = None, context: int = 32768, name: str = "Tiny Chat 1B") -> Path:
    metadata = {"general.architecture": "llama", "general.name": name, "llama.context_length": context,
                "tokenizer.ggml.tokens": ["<s>", "</s>", "<pad>", "hello"], "tokenizer.ggml.token_type": [3, 3, 3, 1],
                "tokenizer.ggml.bos_token_id": 0, "tokenizer.ggml.eos_token_id": 1,
                "tokenizer.ggml.padding_token_id": 2, "tokenizer.ggml.add_bos_token": True}
    if template is not None:
        metadata["tokenizer.chat_template"] = template
    return write_gguf(tmp_path / "tiny.gguf", metadata)


@pytest.fixture
def hashes(tmp_path, monkeypatch):
    monkeypatch.setattr(model_file, "HASHES", tmp_path / "hashes")
    monkeypatch.delenv("COURSE_CHAT_TEMPLATE", raising=False)
    return tmp_path / "hashes"


def test_the_header_gives_name_context_template_and_special_tokens(tmp_path):
    facts = model_facts(chat_file(tmp_path, "{{ messages[0]['content'] }}"))
    assert (facts.name, facts.architecture, facts.context_length) == ("Tiny Chat 1B", "llama", 32768)
    assert (facts.bos_token, facts.eos_token, facts.add_bos_token) == ("<s>", "</s>", True)
    assert facts.special_tokens == ("<s>", "</s>", "<pad>")
    assert facts.chat_template == "{{ messages[0]['content'] }}"
    assert read_metadata(facts.path)["tokenizer.ggml.token_type"] == 4  # other arrays: their length, skipped


@pytest.mark.parametrize("content, problem", [(b"PK\x03\x04zip", "does not start with 'GGUF'"),
                                              (b"GGUF\x03\x00\x00\x00\x00", "cut short"),
                                              (b"GGUF\x01\x00\x00\x00" + b"\0" * 16, "version 1 is too old")])
def test_a_file_that_is_not_a_gguf_model_is_named_with_its_problem(tmp_path, content, problem):
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    with pytest.raises(NotAModelFile, match=problem) as caught:
        model_facts(path)
    assert str(path) in str(caught.value)


def test_qwens_template_is_rendered_with_its_tool_results_grouped_in_one_user_turn():
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"},
                {"role": "assistant", "content": '{"name": "f", "arguments": {}}'},
                {"role": "tool", "content": "R1"}, {"role": "tool", "content": "R2"}]
    text, cuts = render_qwen(messages)
    assert text == ("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n"
                    '<|im_start|>assistant\n{"name": "f", "arguments": {}}<|im_end|>\n'
                    "<|im_start|>user\n<tool_response>\nR1\n</tool_response>\n<tool_response>\nR2\n</tool_response>"
                    "<|im_end|>\n<|im_start|>assistant\n")
    assert [text[:cut] for cut in cuts][-2:] == [text[:cuts[-2]], text[:-len("<|im_start|>assistant\n")]]
    assert len(cuts) == 4  # system, user, assistant, the two results together


def test_gemmas_turns_fold_the_system_message_into_the_first_user_turn_and_keep_it_a_prefix():
    template = ChatTemplate(GEMMA, model="Gemma", bos_token="<bos>", strip_bos=True, special_tokens=("<bos>", "<eos>"))
    prompt = template.prompt([{"role": "system", "content": "Pick a skill."}, {"role": "user", "content": "hi"},
                              {"role": "assistant", "content": "call"}, {"role": "tool", "content": "body"}])
    assert prompt.text == ("<start_of_turn>user\nPick a skill.\n\nhi<end_of_turn>\n<start_of_turn>model\ncall"
                           "<end_of_turn>\n<start_of_turn>user\nbody<end_of_turn>\n<start_of_turn>model\n")
    assert prompt.text[:prompt.cuts[0]] == "<start_of_turn>user\nPick a skill.\n\n" and prompt.system_cut
    assert len(prompt.cuts) == 4 and template.sentinel(prompt.text) == "<bos>"  # the BOS the tokenizer adds: stripped


def test_a_conversation_without_system_message_has_no_prefix_worth_saving():
    prompt = ChatTemplate(GEMMA, model="Gemma").prompt([{"role": "user", "content": "hi"}])
    assert prompt.cuts == [len("<start_of_turn>user\nhi<end_of_turn>\n")] and not prompt.system_cut


def test_a_template_that_refuses_a_partial_conversation_only_loses_that_checkpoint():
    strict = ("{% if messages[-1]['role'] != 'user' %}{{ raise_exception('the last message must be the user') }}"
              "{% endif %}{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}")
    prompt = ChatTemplate(strict, model="Strict").prompt([{"role": "system", "content": "S"},
                                                          {"role": "user", "content": "Q"}])
    assert prompt.text == "[system]S[user]Q" and prompt.cuts == [] and not prompt.system_cut
    with pytest.raises(TemplateError, match="The chat template of Strict refused the conversation: the last message"):
        ChatTemplate(strict, model="Strict").render([{"role": "system", "content": "S"}])


def test_a_template_that_does_not_compile_names_its_model():
    with pytest.raises(TemplateError, match="The chat template of Broken does not compile"):
        ChatTemplate("{% for m in messages %}", model="Broken")


def test_a_file_chosen_by_path_runs_with_its_own_template_name_context_and_hash(tmp_path, hashes, monkeypatch):
    path = chat_file(tmp_path, "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", context=4096)
    monkeypatch.setenv("COURSE_LOCAL_MODEL", str(path))
    model = load_model()
    assert (model.choice, model.name, model.context, model.template_origin) == (str(path), "Tiny Chat 1B", 4096,
                                                                                "the file")
    assert len(model.sha256) == 64 and len(list(hashes.iterdir())) == 1  # hashed once, remembered
    assert display_name() == "Tiny Chat 1B"
    assert model.template.prompt([{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]).cuts == [
        len("<system>S")]  # the text ends with the last message: no generation header in this template
    assert load_model(path).sha256 == model.sha256


def test_a_long_trained_context_is_capped_at_the_courses(tmp_path, hashes):
    assert load_model(chat_file(tmp_path, "{{ 'x' }}", context=131072)).context == model_file.CONTEXT_TOKENS


def test_a_base_model_without_a_chat_template_gets_a_clear_error_unless_a_template_is_given(tmp_path, hashes,
                                                                                            monkeypatch):
    path = chat_file(tmp_path, template=None)
    with pytest.raises(NoChatTemplate, match="No chat template in tiny.gguf: set COURSE_CHAT_TEMPLATE=.* base model"):
        load_model(path)
    given = tmp_path / "turns.jinja"
    given.write_text(GEMMA)
    monkeypatch.setenv("COURSE_CHAT_TEMPLATE", str(given))
    assert load_model(path).template_origin == str(given)


def test_a_path_that_is_no_file_says_what_is_accepted(tmp_path, hashes):
    with pytest.raises(ModelFileMissing, match="neither a published model .*qwen2.5-coder-1.5b.* nor a file"):
        load_model(tmp_path / "missing.gguf")


def test_the_published_models_show_under_their_own_names(monkeypatch):
    monkeypatch.delenv("COURSE_LOCAL_MODEL", raising=False)
    assert display_name() == "Qwen2.5-Coder-1.5B"
    assert [display_name(name) for name in MODELS] == ["Qwen2.5-Coder-1.5B", "Qwen2.5-Coder-0.5B", "Gemma-3-270M"]
    assert display_name(model_path("gemma-3-270m")) == "Gemma-3-270M"  # its cached file, by path


def test_a_model_file_problem_reaches_an_evaluation_as_what_to_do_not_as_a_server_failure(tmp_path, hashes,
                                                                                           monkeypatch):
    from course_utils.backend.client import make_client

    client = make_client("local", model_file=chat_file(tmp_path, template=None), verbose=False)
    with pytest.raises(errors.ServerError) as caught:
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    line = describe_error(caught.value)
    assert "503 FAILED_PRECONDITION" in line and "COURSE_CHAT_TEMPLATE" in line and "try again later" not in line


@pytest.mark.model
def test_the_published_qwen_file_carries_the_template_the_fast_tests_use():
    assert model_facts(model_path("qwen2.5-coder-1.5b")).chat_template == QWEN_TEMPLATE.read_text()
