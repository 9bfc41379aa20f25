"""The agent's tool loop and the skill it loads (lessons 03 to 05).

- `agent`: the loop with its events and the three modes of handing skills over (`run_agent`, `build_harness`,
  `RunOptions`, `MODES`, `RecordingClient`, `ReplayClient`, `print_event`, `MaxTurnsExceeded`, `ACTIVATION_NOTE`;
  lesson 05's `TRUSTED_ROOTS`, `load_trusted_skills`).
- `tool_policy`: the harness's per-turn policies (`OneStepAtATime`, `RefuseRepeats`, `StopAt`, `Policy`, `Mode`,
  `tool_config`, lessons 03 and 04).
- `files`: the `read_file` tool confined to one folder (the `filesystem` mode).
- `bakery`: the bakery's tools, its calendar and the cake skill's script (`bakery_tools`, `CAKE_REQUEST`,
  `ASSISTANT_PREAMBLE`, `ANSWERING_TOOLS`, `NONE_CHOICE`, lessons 03 to 05).
"""
