"""The local model: provisioning its weights, the 4-bit copy (quantize), and the supervised vLLM server."""
