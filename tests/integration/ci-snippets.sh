#!/usr/bin/env bash
# ci-snippets.sh - the GitLab and GitHub Actions gate jobs of configs/ci/
# run as their CI systems run them (tests/ci-snippets.py: GitLab's one
# `set -eo pipefail` shell and its after_script; Actions' `bash -e` per
# step, step outputs and `if: always()`), with git, make and sbatch stood
# in by PATH: the stand-in sbatch checks it was asked to wait for the job
# script with both builds, writes that gate's summary and exits with the
# status it is given.  For every status of oqb's table (0-5):
#  - GitLab: the job exits with it (allow_failure then lets 3 and 4 pass),
#    and the summary is printed after the script, whatever it returned;
#  - GitHub: the job fails with it for 1, 2 and 5 and passes for 0, 3 and
#    4 (3 and 4 with a warning); the summary reaches the step summary.
# A negative control: without its after_script the GitLab job does not
# publish the summary of a failed gate, and the check sees it.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RUN=$ROOT/tests/ci-snippets.py

if ! python3 -c 'import yaml' 2>/dev/null; then
	notok ci_snippets_python_yaml "python3's yaml module is missing: make deps installs python3-yaml"
	finish
fi

mkdir -p "$T/path"
printf '#!/bin/sh\necho "stand-in: $(basename "$0") $*"\n' >"$T/path/git"
cp "$T/path/git" "$T/path/make"
cat >"$T/path/sbatch" <<'SH'
#!/bin/sh
case " $* " in *" --wait "*) ;; *) echo "sbatch stand-in: asked without --wait: $*" >&2; exit 97 ;; esac
case " $* " in *" configs/ci/oqb-gate.sbatch "*) ;; *) echo "sbatch stand-in: not the job script: $*" >&2; exit 98 ;; esac
case "$*" in *"OQB_BASE=../base/bin,OQB_NEW=bin"*) ;; *) echo "sbatch stand-in: no OQB_BASE and OQB_NEW: $*" >&2; exit 99 ;; esac
mkdir -p "${OQB_OUT:?OQB_OUT unset}"
echo "## stand-in gate: exit $FAKE_RC" >"$OQB_OUT/summary.md"
exit "$FAKE_RC"
SH
chmod +x "$T/path/"*
export PATH=$T/path:$PATH

# run KIND FILE JOB RC: the job in a fresh directory; sets OUT, W
run() {
	W=$T/$1-$4
	mkdir -p "$W"
	OUT=$(FAKE_RC=$4 python3 "$RUN" "$1" "$2" "$3" "$W" 2>&1)
}

GL=$ROOT/configs/ci/gitlab-ci.yml
GH=$ROOT/configs/ci/github-actions.yml
for rc in 0 1 2 3 4 5; do
	run gitlab "$GL" ab-gate $rc
	if [ "$(tail -1 <<<"$OUT")" = "job exit $rc" ] && grep -q "^## stand-in gate: exit $rc$" <<<"$OUT"; then
		ok "gitlab_gate_exit_${rc}_kept_and_summary_published"
	else
		notok "gitlab_gate_exit_${rc}_kept_and_summary_published" "$(tail -6 <<<"$OUT")"
	fi
	run github "$GH" ab-gate $rc
	case $rc in 0|3|4) want=0 ;; *) want=$rc ;; esac
	warned=1
	case $rc in 3|4) grep -q "^::warning::oqb ab exit $rc" <<<"$OUT" || warned=0 ;; esac
	if [ "$(tail -1 <<<"$OUT")" = "job exit $want" ] && [ $warned = 1 ] &&
		grep -q "^## stand-in gate: exit $rc$" "$W/step-summary.md" 2>/dev/null &&
		grep -q '^step artifacts: uses actions/upload-artifact' <<<"$OUT"; then
		ok "github_gate_exit_${rc}_job_$want"
	else
		notok "github_gate_exit_${rc}_job_$want" "$(tail -6 <<<"$OUT")"
	fi
done
jq -n --argjson d "$(python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$GL")" \
	'$d["ab-gate"].allow_failure.exit_codes == [3, 4] and $d["ab-gate"].artifacts.when == "always"' | grep -q true &&
	ok gitlab_allows_3_and_4_keeps_artifacts || notok gitlab_allows_3_and_4_keeps_artifacts "allow_failure or artifacts changed"

# negative control: no after_script, a failed gate's summary is not shown
python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1])); del d["ab-gate"]["after_script"]
yaml.safe_dump(d, open(sys.argv[2], "w"))' "$GL" "$T/no-after.yml"
run gitlab "$T/no-after.yml" ab-gate 1
if [ "$(tail -1 <<<"$OUT")" = "job exit 1" ] && ! grep -q "^## stand-in gate" <<<"$OUT"; then
	ok gitlab_summary_check_can_fail
else
	notok gitlab_summary_check_can_fail "the summary was printed without after_script: $(tail -4 <<<"$OUT")"
fi
finish
