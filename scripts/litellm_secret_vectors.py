"""Writes db/tests/fixtures/litellm_secrets.json: values sealed by LiteLLM's own
encrypt_decrypt_utils (PyNaCl SecretBox and AES-256-GCM), for the Rust tests to read without
Python. Run with a Python that has litellm (and pynacl, cryptography):

    python scripts/litellm_secret_vectors.py > db/tests/fixtures/litellm_secrets.json

With --check FILE it decrypts, with LiteLLM's code, the `sealed_by_pointwork` values of FILE
(what the Rust test prints with POINTWORK_PRINT_SEALED=1) and fails on any mismatch."""

import base64
import json
import sys

import nacl.secret


def load_litellm_crypto():
    """LiteLLM's encrypt_decrypt_utils.py itself, without importing the whole proxy (its two
    imports from litellm are a logger and a constant's name)."""
    import importlib.util
    import logging
    import types

    spec = importlib.util.find_spec("litellm")
    root = spec.submodule_search_locations[0]
    for name, attrs in {
        "litellm": {},
        "litellm._logging": {"verbose_proxy_logger": logging.getLogger("litellm")},
        "litellm.proxy": {},
        "litellm.proxy.auth": {},
        "litellm.proxy.auth.master_key_boot_check": {"SALT_KEY_ENV_VAR": "LITELLM_SALT_KEY"},
    }.items():
        module = types.ModuleType(name)
        module.__path__ = []
        module.__dict__.update(attrs)
        sys.modules[name] = module
    path = root + "/proxy/common_utils/encrypt_decrypt_utils.py"
    spec = importlib.util.spec_from_file_location("encrypt_decrypt_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


u = load_litellm_crypto()

SIGNING_KEY = "sk-salt-0123456789abcdef"
PLAINS = ["sk-upstream-secret-42", "openai/gpt-4o-mini", "http://127.0.0.1:8080/v1", "", "ünïcode ✓"]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        doc = json.load(open(sys.argv[2]))
        for v in doc["sealed_by_pointwork"]:
            got = u._decrypt_with_signing_key(value=v["sealed"], signing_key=doc["signing_key"])
            assert got == v["plain"], (got, v["plain"])
        print("ok: LiteLLM decrypts every value Pointwork sealed")
        return
    nacl_values = []
    for plain in PLAINS:
        sealed = base64.urlsafe_b64encode(u.encrypt_value(value=plain, signing_key=SIGNING_KEY)).decode()
        nacl_values.append({"plain": plain, "sealed": sealed})
    gcm_values = [{"plain": p, "sealed": u._encrypt_aes_gcm(value=p, signing_key=SIGNING_KEY)} for p in PLAINS]
    nonce = bytes(range(24))
    box = nacl.secret.SecretBox(u._derive_key(SIGNING_KEY))
    fixed = base64.urlsafe_b64encode(box.encrypt(PLAINS[0].encode(), nonce)).decode()
    std = base64.b64encode(u.encrypt_value(value=PLAINS[2], signing_key=SIGNING_KEY)).decode()
    json.dump(
        {
            "signing_key": SIGNING_KEY,
            "nacl": nacl_values,
            "gcm": gcm_values,
            "standard_base64": {"plain": PLAINS[2], "sealed": std},
            "fixed_nonce": {"nonce_hex": nonce.hex(), "plain": PLAINS[0], "sealed": fixed},
        },
        sys.stdout,
        indent=2,
        ensure_ascii=False,
    )
    print()


main()
