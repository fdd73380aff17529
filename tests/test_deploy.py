"""The deployment files say what the code does: every setting they name exists and validates, secrets
come from Secrets, probes and scrape annotations hit the ports the server binds, the image's user is the
pod's. (No Docker engine or cluster runs here: the image is not built by the tests.)"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from guard.config import describe, load_settings

DEPLOY = Path(__file__).parent.parent / "deploy"
SETTINGS = {name for name, _, _ in describe()}


def manifests() -> list[dict]:
    return [d for d in yaml.safe_load_all((DEPLOY / "kubernetes" / "guard.yaml").read_text()) if d]


def guard_container() -> tuple[dict, dict]:
    (dep,) = [d for d in manifests() if d["kind"] == "Deployment"]
    (c,) = [c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "guard"]
    return dep, c


def dockerfile_env() -> dict[str, str]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    block = re.search(r"^ENV (.+)$", text, re.MULTILINE).group(1)
    return dict(kv.split("=", 1) for kv in block.split())


def test_every_guard_setting_named_exists_and_validates():
    _, c = guard_container()
    names = [e["name"] for e in c["env"]]
    assert names and all(n in SETTINGS for n in names), set(names) - SETTINGS
    docker = {k: v for k, v in dockerfile_env().items() if k.startswith("GUARD_") and k != "GUARD_VENV"}
    assert docker and all(k in SETTINGS for k in docker), set(docker) - SETTINGS
    literal = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    secret = {"GUARD_STORE__KEY": "a2V5" * 11, "GUARD_STORE__POSTGRES_DSN": "host=db"}
    s = load_settings(env={**docker, **literal, **secret})
    assert s.store.kind == "postgres" and s.backend.name == "openai" and s.server.host == "0.0.0.0"


def test_key_and_dsn_come_from_a_secret_never_a_literal():
    _, c = guard_container()
    env = {e["name"]: e for e in c["env"]}
    for name in ("GUARD_STORE__KEY", "GUARD_STORE__POSTGRES_DSN"):
        assert "value" not in env[name] and env[name]["valueFrom"]["secretKeyRef"]["name"] == "guard-store"
    (secret,) = [d for d in manifests() if d["kind"] == "Secret"]
    assert {"key", "postgres-dsn"} <= set(secret["stringData"])


def test_probes_and_scraping_use_the_ports_the_server_binds():
    dep, c = guard_container()
    env = {e["name"]: e.get("value") for e in c["env"]}
    port, metrics = int(env["GUARD_SERVER__PORT"]), int(env["GUARD_SERVER__METRICS_PORT"])
    assert c["readinessProbe"]["grpc"]["port"] == port == c["livenessProbe"]["grpc"]["port"]
    assert {p["name"]: p["containerPort"] for p in c["ports"]} == {"grpc": port, "metrics": metrics}
    assert int(dep["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"]) == metrics
    (policy,) = [d for d in manifests() if d["kind"] == "NetworkPolicy"]
    assert [p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]] == [metrics]


def test_the_pod_runs_as_the_images_user():
    dep, c = guard_container()
    user = re.search(r"^USER (\d+)$", (DEPLOY / "Dockerfile").read_text(), re.MULTILINE).group(1)
    assert dep["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(user)
    assert dep["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
