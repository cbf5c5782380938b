"""The turn: the loop, the deterministic plan, tool calls, the evidence pool, the answer under its grammar, and the checks of its citations and support."""
