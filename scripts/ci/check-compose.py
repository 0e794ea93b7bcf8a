#!/usr/bin/env python3
"""Checks compose.yaml and its example .env against what docs/deployment.md promises (python3-yaml)."""
import pathlib
import re
import sys

import yaml

compose_path = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "compose.yaml")
env_path = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "deploy/compose.env.example")
text = compose_path.read_text()
services = yaml.safe_load(text)["services"]
problems = []


def expect(condition, message):
    if not condition:
        problems.append(message)


# A compose interpolation of a secret (not `$$`, which the container's shell expands from its environment).
SECRET = re.compile(r"(?<!\$)\$\{?[A-Z0-9_]*(PASSWORD|AUTH|TOKEN|SECRET|KEY)")

for name, service in services.items():
    expect("no-new-privileges:true" in (service.get("security_opt") or []), f"{name}: no security_opt no-new-privileges:true")
    expect(service.get("cap_drop") == ["ALL"], f"{name}: cap_drop is not [ALL]")
    for field in ("command", "entrypoint"):
        value = service.get(field) or []
        joined = " ".join(value) if isinstance(value, list) else str(value)
        expect(not SECRET.search(joined), f"{name}: a secret is put on its {field} (a command line shows in ps)")
    if name.startswith("openvat"):
        expect(service.get("read_only") is True, f"{name}: root file system not read-only")
        expect(not service.get("cap_add"), f"{name}: adds capabilities")
        expect("OPENVAT_TRUST_PROXY" in (service.get("environment") or {}), f"{name}: no OPENVAT_TRUST_PROXY for its proxy")

# The example .env ships no usable secret, and compose.yaml requires each one (${VAR:?…}).
for line in env_path.read_text().splitlines():
    match = re.match(r"^([A-Z0-9_]*(PASSWORD|TOKEN|SECRET|KEY))=(.*)$", line)
    if match:
        expect(match.group(3) == "", f"{env_path}: {match.group(1)} has a value")
        expect("${" + match.group(1) + ":?" in text, f"{compose_path}: {match.group(1)} is not required (${{{match.group(1)}:?…}})")

for problem in problems:
    print(f"  {problem}")
sys.exit(1 if problems else 0)
