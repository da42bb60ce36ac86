#!/usr/bin/env bash
# SPEC §25 / issue 29 — `closegate serve`. Builds closegate, makes a scratch repository with 50
# agent worktrees (returned, in progress, blocked) and an audit log of 10,000 records (50 real
# `check` records, then copies of them spread over 30 days), starts `closegate serve`, and
# measures in the same run:
#
#   first page:  the server's own time (its Server-Timing header) for the very first `GET /`,
#                and the median over the rounds; the target is at most 100 ms. The server reads
#                the view before printing its URL and again only when a watched file changed;
#                the time of such a fresh read is printed too (`after a change`)
#   /api/board:  a whole `GET /api/board` (connect to last byte) against `closegate board --json`
#                (a process), median of interleaved rounds; the target is at most 1.2x
#   event:       the time from a `closegate check` process ending to the `change` event on the
#                page's event stream; the target is at most 1 s
#
# Usage: scripts/bench-serve.sh [rounds]   (default 11). BENCH_PROFILE=debug uses the debug
# build. SCREENSHOT=FILE also writes a 1280x800 screenshot of the page there (needs chromium).
# Needs python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-11}
profile=${BENCH_PROFILE:-release}

. "$here/scripts/bench-env.sh"
bench_setup "$profile"

git init -q -b main "$dir/repo"
cd "$dir/repo"
printf '[[checks]]\nname = "unit"\nrun = "echo ok; true"\n[[checks]]\nname = "lint"\nrun = "true"\n' > .closegate.toml
mkdir -p src tests && echo base > src/base.txt && echo "true" > tests/base_test.sh
git add . && git commit -q -m base
for i in $(seq 1 50); do
  slug="$(printf 'team%d-task%02d' $((i % 5)) "$i")"
  wt="$dir/wt/$slug"
  git worktree add -q -b "agent/$slug" "$wt" main
  echo "$i" > "$wt/src/$slug.txt"
  [ $((i % 7)) -eq 0 ] && echo "true # $i" > "$wt/tests/${slug}_test.sh"
  git -C "$wt" add . && git -C "$wt" commit -q -m "work on $slug"
  case $((i % 10)) in
    0) state=in-progress ;;
    1) state=blocked ;;
    *) state=close-ok ;;
  esac
  "$closegate" -C "$wt" close --state "$state" --slug "$slug" --abstract "task $i" \
    --done "did task $i" >/dev/null 2>&1 ||
    printf '# STATUS — %s\n\n- state: %s\n' "$slug" "$state" > "$wt/_EXEC_STATUS.md"
  "$closegate" -C "$wt" check --format json >/dev/null 2>&1 || true
done

python3 - "$closegate" "$dir/repo" "$rounds" "$dir/wt" "${SCREENSHOT:-}" <<'PY'
import json, os, random, socket, statistics, subprocess, sys, time
closegate, repo, rounds, wts, screenshot = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
audit = os.path.join(repo, ".git", "closegate", "audit.jsonl")
real = [json.loads(l) for l in open(audit) if l.strip()]
assert real, "no real check record was written"
start = 1_764_000_000 - 30 * 86400
with open(audit, "a") as f:
    for n in range(10_000 - len(real)):
        r = dict(real[n % len(real)])
        t = start + n * (30 * 86400 // 10_000)
        r["ts"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
        f.write(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n")
print(f"{sum(1 for _ in open(audit))} records, {len(os.listdir(wts))} worktrees")

serve = subprocess.Popen([closegate, "serve"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
url = serve.stdout.readline().strip()
port = int(url.split(":")[2].split("/")[0])
token = url.split("token=")[1]

def get(path):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET {path}?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    head, body = data.split(b"\r\n\r\n", 1)
    timing = [l for l in head.decode().split("\r\n") if l.startswith("Server-Timing:")]
    ms = float(timing[0].split("dur=")[1]) if timing else None
    return head.decode().split(" ")[1], ms, body

try:
    status, first_ms, body = get("/")
    assert status == "200", status
    page_ms = [get("/")[1] for _ in range(rounds)]

    def api():
        t = time.perf_counter(); status, _, body = get("/api/board"); assert status == "200"
        return time.perf_counter() - t, body
    def cli():
        t = time.perf_counter()
        out = subprocess.run([closegate, "board", "--json"], cwd=repo, capture_output=True, check=True).stdout
        return time.perf_counter() - t, out
    assert api()[1] == cli()[1], "/api/board differs from board --json"
    times = {"api": [], "cli": []}
    # One generator for all rounds (a new one per round gave every round the same order).
    order = random.Random(29)
    for _ in range(rounds):
        for name, f in order.sample([("api", api), ("cli", cli)], 2):
            times[name].append(f()[0])

    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /events?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    buf = b""
    def next_event(timeout):
        global buf
        s.settimeout(timeout)
        while True:
            while b"\n\n" in buf:
                message, buf = buf.split(b"\n\n", 1)
                for line in message.split(b"\n"):
                    if line.startswith(b"event: "):
                        return line[7:].strip().decode()
            chunk = s.recv(4096)
            assert chunk, "event stream ended"
            buf += chunk
    def drain():
        try:
            while True:
                next_event(0.3)
        except socket.timeout:
            pass
    assert next_event(5) == "hello"
    target = sorted(os.path.join(wts, d) for d in os.listdir(wts))[2]
    lags, cold_ms = [], []
    for _ in range(rounds):
        drain()
        subprocess.run([closegate, "check", "--format", "json"], cwd=target, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = time.perf_counter()
        assert next_event(5) == "change"
        lags.append(time.perf_counter() - done)
        # What the page fetches on that event: the live part, read afresh after the change.
        status, ms, _ = get("/fragment")
        assert status == "200", status
        cold_ms.append(ms)

    if screenshot:
        import tempfile
        profile_dir = tempfile.mkdtemp()
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", f"--user-data-dir={profile_dir}", "--hide-scrollbars",
                        "--window-size=1280,800", "--virtual-time-budget=2000",
                        f"--screenshot={screenshot}", url],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
finally:
    serve.kill()

api_ms, cli_ms = (statistics.median(times[n]) * 1000 for n in ("api", "cli"))
print(f"first page:  {first_ms:.1f} ms server time (first request), median {statistics.median(page_ms):.1f} ms "
      f"over {rounds}; target <= 100 ms")
print(f"after a change: the live part read afresh in median {statistics.median(cold_ms):.1f} ms, "
      f"max {max(cold_ms):.1f} ms server time over {rounds}")
print(f"/api/board:  {api_ms:.1f} ms vs board --json {cli_ms:.1f} ms = {api_ms / cli_ms:.2f}x "
      f"(median of {rounds} interleaved rounds); target <= 1.2x")
print(f"event:       check finished -> change event median {statistics.median(lags) * 1000:.0f} ms, "
      f"max {max(lags) * 1000:.0f} ms over {rounds}; target <= 1000 ms")
PY
