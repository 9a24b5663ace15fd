#!/usr/bin/env python3
"""ci-snippets.py - runs the gate job of a CI snippet (configs/ci/*.yml) as
its CI system would, with the commands it calls stood in by PATH.

    ci-snippets.py gitlab FILE JOB WORKDIR
    ci-snippets.py github FILE JOB WORKDIR

gitlab: the job's `script` lines run in one bash with `set -eo pipefail`
(GitLab's shell executor), then `after_script` in a fresh bash whatever
the script returned; `variables` are in the environment.  github: each
step's `run` runs as `bash --noprofile --norc -eo pipefail FILE` (Actions'
default shell) with the job's and the step's `env`; a step runs when no
step failed before it, or when its `if` is always(); `uses` steps are
skipped; ${{ steps.ID.outputs.NAME }} comes from the GITHUB_OUTPUT file
of step ID, and other ${{ }} expressions become "stand-in".  Prints every
command's output; the last line is "job exit N" (gitlab: the script's
status; github: the first failing step's status, or 0).
"""
import os
import re
import subprocess
import sys

import yaml


def sh(args, script, env, cwd):
    p = subprocess.run(args + [script], env=env, cwd=cwd)
    return p.returncode


def gitlab(doc, job, cwd):
    j = doc[job]
    env = dict(os.environ, **{k: str(v) for k, v in j.get("variables", {}).items()})
    body = "set -eo pipefail\n" + "\n".join(j["script"]) + "\n"
    rc = subprocess.run(["bash", "-c", body], env=env, cwd=cwd).returncode
    after = "\n".join(j.get("after_script", [])) + "\n"
    subprocess.run(["bash", "-c", after], env=env, cwd=cwd)
    return rc


def github(doc, job, cwd):
    j = doc["jobs"][job]
    outputs, failed = {}, 0
    base_env = dict(os.environ, **{k: str(v) for k, v in j.get("env", {}).items()})
    base_env["GITHUB_STEP_SUMMARY"] = os.path.join(cwd, "step-summary.md")

    def expand(s):
        def one(m):
            e = m.group(1).strip()
            m2 = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", e)
            if m2:
                return outputs.get(m2.group(1), {}).get(m2.group(2), "")
            return "stand-in"
        return re.sub(r"\$\{\{(.*?)\}\}", one, str(s))

    for i, st in enumerate(j["steps"]):
        cond = str(st.get("if", ""))
        if failed and "always()" not in cond:
            print("step %s: not run (an earlier step failed)" % st.get("name", i), flush=True)
            continue
        if "uses" in st:
            print("step %s: uses %s (not run here)" % (st.get("name", i), st["uses"]), flush=True)
            continue
        env = dict(base_env, **{k: expand(v) for k, v in st.get("env", {}).items()})
        out = os.path.join(cwd, "github-output-%d" % i)
        open(out, "w").close()
        env["GITHUB_OUTPUT"] = out
        path = os.path.join(cwd, "step-%d.sh" % i)
        with open(path, "w") as f:
            f.write(expand(st["run"]))
        rc = sh(["bash", "--noprofile", "--norc", "-eo", "pipefail"], path, env, cwd)
        if "id" in st:
            kv = {}
            for line in open(out):
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    kv[k] = v
            outputs[st["id"]] = kv
        print("step %s: exit %d" % (st.get("name", i), rc), flush=True)
        if rc and not failed:
            failed = rc
    return failed


def main():
    kind, path, job, cwd = sys.argv[1:5]
    with open(path) as f:
        doc = yaml.safe_load(f)
    rc = gitlab(doc, job, cwd) if kind == "gitlab" else github(doc, job, cwd)
    print("job exit %d" % rc, flush=True)


if __name__ == "__main__":
    main()
