#!/usr/bin/env python3
"""Checks deploy/kubernetes/ against what docs/deployment.md promises (python3-yaml, no cluster)."""
import pathlib
import re
import sys

import yaml

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "deploy/kubernetes")
docs = {}
for path in sorted(root.glob("*.yaml")):
    for doc in yaml.safe_load_all(path.read_text()):
        if doc and "kind" in doc:
            docs.setdefault(doc["kind"], []).append(doc)

problems = []


def expect(condition, message):
    if not condition:
        problems.append(message)


for kind in ("Deployment", "Service", "PodDisruptionBudget", "ConfigMap", "Secret"):
    expect(kind in docs, f"no {kind}")
if not problems:
    deployment = docs["Deployment"][0]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    expect(deployment["spec"]["replicas"] == 2, "replicas is not 2")
    expect(deployment["spec"]["selector"]["matchLabels"].items() <= labels.items(), "selector misses the pod labels")
    expect(container["readinessProbe"]["httpGet"]["path"] == "/ready", "readiness is not /ready")
    expect(container["livenessProbe"]["httpGet"]["path"] == "/health", "liveness is not /health")
    expect("requests" in container.get("resources", {}), "no resource requests")
    expect("limits" in container.get("resources", {}), "no resource limits")
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    pre_stop_s = int(pre_stop[1]) if pre_stop[0] == "sleep" else 0
    expect(pre_stop_s > 0, "no preStop pause")
    # The service exits at the latest 15 s after SIGTERM; the grace period must cover preStop + 15 s.
    expect(pod["terminationGracePeriodSeconds"] >= pre_stop_s + 15, "grace period shorter than preStop + 15 s")
    expect(container["securityContext"]["readOnlyRootFilesystem"] is True, "root file system not read-only")
    expect(pod["securityContext"]["runAsNonRoot"] is True, "runAsNonRoot not set")
    refs = [next(iter(ref.values()))["name"] for ref in container["envFrom"]]
    expect(docs["ConfigMap"][0]["metadata"]["name"] in refs, "the ConfigMap is not used")
    expect(docs["Secret"][0]["metadata"]["name"] in refs, "the Secret is not used")
    for other in ("Service", "PodDisruptionBudget"):
        selector = docs[other][0]["spec"]["selector"]
        selector = selector.get("matchLabels", selector)
        expect(selector.items() <= labels.items(), f"the {other} does not select the pods")
    port = container["ports"][0]
    expect(port["containerPort"] == 8080, "container port is not 8080")
    expect(docs["Service"][0]["spec"]["ports"][0]["targetPort"] in (port.get("name"), 8080), "Service targets another port")
    expect(docs["PodDisruptionBudget"][0]["spec"].get("minAvailable") == 1, "PodDisruptionBudget does not keep one")
    security = container["securityContext"]
    expect(security.get("allowPrivilegeEscalation") is False, "privilege escalation not refused")
    expect(security.get("capabilities", {}).get("drop") == ["ALL"], "capabilities not all dropped")
    expect("OPENVAT_TRUST_PROXY" in (docs["ConfigMap"][0].get("data") or {}), "no OPENVAT_TRUST_PROXY for the ingress")
    secret = docs["Secret"][0].get("stringData") or {}
    expect(re.search(r"[?&]sslmode=(verify-full|verify-ca|require)\b", secret.get("DATABASE_URL", "")), "DATABASE_URL without sslmode")
    expect(secret.get("REDIS_URL", "").startswith("rediss://"), "REDIS_URL is not rediss:// (TLS)")

for problem in problems:
    print(f"  {root}: {problem}")
sys.exit(1 if problems else 0)
