"""Run llm-compressor's ``model_free_ptq`` on a local folder: the quantizer environment's entry point.

    <quantizer-venv>/bin/python assistant/model/quantize_worker.py SOURCE OUT SCHEME IGNORE_JSON

Runs in its own virtual environment (see ``assistant/model/quantize.py``), so it imports nothing from the app:
only the standard library and llm-compressor. Data-free: no calibration set, no network, CPU only.
"""

from __future__ import annotations

import json
import os
import sys


# Schemes that are not llm-compressor presets: name -> compressed-tensors QuantizationArgs of the weights.
CUSTOM_WEIGHT_SCHEMES = {
    # 4-bit weights, asymmetric (uint4 with a zero point), one scale and zero point per 32 inputs.
    "W4A16_ASYM_G32": {"num_bits": 4, "type": "int", "symmetric": False, "strategy": "group", "group_size": 32},
}


def scheme_for(name: str):
    """A preset's name as it is, or the QuantizationScheme of one of ours."""
    if name not in CUSTOM_WEIGHT_SCHEMES:
        return name
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme

    return QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(**CUSTOM_WEIGHT_SCHEMES[name]))


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    source, out, scheme, ignore = argv[0], argv[1], argv[2], json.loads(argv[3])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from llmcompressor import model_free_ptq

    threads = os.cpu_count() or 1
    print(f"model_free_ptq: {source} -> {out} scheme={scheme} ignore={ignore} (CPU, {threads} threads)",
          flush=True)
    model_free_ptq(model_stub=source, save_directory=out, scheme=scheme_for(scheme), ignore=ignore, max_workers=1,
                   device="cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
