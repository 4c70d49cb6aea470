"""TEST DOUBLE: a package of the stand-in vLLM (test/model/standInVllm/vllm/entrypoints/openai/api_server.py says what it plays)."""
