#!/bin/bash
# The HTTP face against the operator's browser: a page served from another
# port (another origin) runs fetch() in headless Chromium against jm4lwd.
# It must read nothing (no /debug/pprof/heap, no /jemalloc/status), and
# its POSTs to /4lw/jmep (with X-Jm4lw: preflighted and refused; without:
# refused by the server) must leave prof.active off, as mntr and
# /jemalloc/status say afterwards. Controls: the page reads its own
# origin, and curl's proper POST does flip prof.active, so each check can
# fail. Needs jemalloc's profiling (not under the sanitizers).
#
#	bash http_browser.sh    (JM4LWD=...)
. "$(dirname "$0")/../lib.sh"

need chromium curl python3 nc.openbsd

case_browser() {
	local d w wport res
	d=$(scratch browser)
	start_daemon -C "$d" -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$d" || return
	assert_eq "before: prof.active is off (mntr)" false "$(mntr_value jemalloc_prof_active)"

	# The attacker's page, on a port of its own.
	w=$(scratch web)
	cat >"$w/attack.html" <<EOF
<!doctype html><html><body>waiting<script>
const T = "http://127.0.0.1:$HTTP_PORT";
const out = [];
async function attempt(name, p) {
  try {
    const r = await p;
    const t = await r.text();
    out.push(name + ":read:" + r.status + ":" + t.length);
  } catch (e) {
    out.push(name + ":blocked");
  }
}
(async () => {
  await attempt("self", fetch("/attack.html"));
  await attempt("heap", fetch(T + "/debug/pprof/heap"));
  await attempt("status", fetch(T + "/jemalloc/status"));
  await attempt("jmep", fetch(T + "/4lw/jmep",
    {method: "POST", headers: {"X-Jm4lw": "1"}}));
  await attempt("jmepform", fetch(T + "/4lw/jmep",
    {method: "POST", mode: "no-cors", body: "x"}));
  document.body.textContent = "RESULT " + out.join(" ") + " END";
})();
</script></body></html>
EOF
	wport=$(free_port)
	(cd "$w" && exec python3 -m http.server "$wport" --bind 127.0.0.1) >"$w/server.log" 2>&1 &
	track $!
	for _ in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$wport/attack.html" && break
		sleep 0.1
	done
	timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$w/profile" --virtual-time-budget=10000 --dump-dom \
		"http://127.0.0.1:$wport/attack.html" >"$w/dom.html" 2>"$w/chromium.err"
	res=$(grep -o 'RESULT .* END' "$w/dom.html")
	echo "# $res"
	if [ -z "$res" ]; then
		fail "the page ran its fetches in Chromium" "$(head -c 600 "$w/dom.html")" \
			"$(tail -5 "$w/chromium.err")"
		stop_daemon
		return
	fi
	assert_grep "control: the page reads its own origin" 'self:read:200:[1-9]' <(echo "$res")
	assert_grep "another origin cannot read /debug/pprof/heap" ' heap:blocked ' <(echo "$res")
	assert_grep "another origin cannot read /jemalloc/status" ' status:blocked ' <(echo "$res")
	assert_grep "another origin's POST /4lw/jmep with X-Jm4lw fails its preflight" \
		' jmep:blocked ' <(echo "$res")
	# A no-cors POST is sent, and its answer is opaque to the page.
	assert_grep "another origin's plain POST /4lw/jmep gets an opaque answer" \
		' jmepform:read:0:0 ' <(echo "$res")
	assert_eq "after the page: prof.active still off (mntr)" false "$(mntr_value jemalloc_prof_active)"
	hreq status /jemalloc/status >/dev/null
	assert_grep_F "after the page: /jemalloc/status says prof_active false" '"prof_active": false' "$T/status.body"
	# Control: the operator's own POST does turn it on.
	assert_http "control: curl POST /4lw/jmep with X-Jm4lw" 200 jmep /4lw/jmep -X POST -H 'X-Jm4lw: 1'
	assert_eq "control: then prof.active is on (mntr)" true "$(mntr_value jemalloc_prof_active)"
	stop_daemon
}

case_browser
finish
