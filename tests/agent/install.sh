#!/bin/bash
# cmake --install into a scratch prefix, then build examples/ against it
# twice, as embedders would: find_package(jm4lw) and pkg-config. Then run
# the example and talk to both of its ports.
. "$(dirname "$0")/../lib.sh"
src=$1
build=$2

cmake --install "$build" --prefix "$T/prefix" >"$T/install.log" 2>&1
assert_cmd "cmake --install" test $? -eq 0
for f in include/jm4lw.h lib/libjm4lw.so lib/libjm4lw.a lib/libjm4lw_agent.so \
	lib/pkgconfig/jm4lw.pc lib/cmake/jm4lw/jm4lwConfig.cmake bin/jm4lwd \
	bin/jm4lw bin/jm4lw-run share/doc/jm4lw/examples/jm4lwd.conf; do
	assert_cmd "installed $f" test -e "$T/prefix/$f"
done
preload=$(env JM4LW_AGENT= JM4LW_LISTEN=127.0.0.1:0 JM4LW_QUIET=1 \
	"$T/prefix/bin/jm4lw-run" /bin/sh -c 'echo "$LD_PRELOAD"')
assert_cmd "installed jm4lw-run preloads the installed agent ($preload)" \
	grep -q "$T/prefix/bin/../lib/libjm4lw_agent.so" <<<"$preload"

# The units as installed (DESTDIR: the paths they name are the configured
# prefix's), checked by systemd-analyze verify against that root: their
# ExecStart programs must be there and executable, their Documentation=
# man pages found (MANPATH in the root), their dependencies known (the
# root gets a copy of systemd's own targets). Then the control: without
# the installed jm4lwd, verify must complain.
R=$T/root
DESTDIR=$R cmake --install "$build" >"$T/install-root.log" 2>&1
assert_cmd "DESTDIR=ROOT cmake --install" test $? -eq 0
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
svc=$(find "$R" -name jm4lwd.service -path '*/systemd/system/*')
unitdir=$(dirname "$svc")
man8=$(find "$R" -name jm4lwd.8)
mandir=$(dirname "$(dirname "$man8")")
for f in jm4lwd.service jm4lw-dump.service jm4lw-dump.timer; do
	assert_cmd "installed unit $f in a systemd unit directory" test -f "$unitdir/$f"
done
assert_cmd "installed jm4lwd.service runs the installed jm4lwd" \
	grep -qx "ExecStart=$prefix/bin/jm4lwd -f .*/jm4lw/jm4lwd.conf" "$svc"
conf=$(sed -n 's/^ExecStart=[^ ]* -f //p' "$svc")
assert_cmd "... with the configuration it names installed ($conf)" test -f "$R$conf"
for p in jm4lwd.8 jm4lw.1 jm4lw-prof.1 jm4lw-run.1; do
	assert_cmd "installed man page $p" test -f "$mandir/man${p##*.}/$p"
done
# The system the units land on: systemd's targets, and the /bin/kill
# of jm4lwd.service's ExecReload.
mkdir -p "$R/usr/lib/systemd/system" "$R/bin"
cp /usr/lib/systemd/system/*.target "$R/usr/lib/systemd/system/"
cp /bin/kill "$R/bin/kill"
verify() {
	(cd "$R" && MANPATH=$mandir systemd-analyze verify --root="$R" \
		jm4lwd.service jm4lw-dump.service jm4lw-dump.timer 2>&1)
}
if command -v systemd-analyze >/dev/null; then
	out=$(verify)
	assert_eq "systemd-analyze verify --root: the installed units, nothing to say" "0:" "$?:$out"
	mv "$R$prefix/bin/jm4lwd" "$T/jm4lwd.away"
	out=$(verify)
	assert_grep "verify control: without the installed jm4lwd it complains" \
		"jm4lwd.service: Command $prefix/bin/jm4lwd is not executable" <(printf '%s\n' "$out")
	mv "$T/jm4lwd.away" "$R$prefix/bin/jm4lwd"
else
	skip "systemd-analyze verify (not installed)"
fi
# An administrator's configuration survives the next install.
echo "# edited here" >>"$R$conf"
DESTDIR=$R cmake --install "$build" >"$T/install-root2.log" 2>&1
assert_grep "a second install keeps the configuration that is there" '^# edited here$' "$R$conf"
for p in jm4lwd jm4lw jm4lw-prof jm4lw-run; do
	assert_eq "installed $p --version" "$p $(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")" \
		"$("$R$prefix/bin/$p" --version 2>&1)"
done

cmake -S "$src/examples" -B "$T/ex-cmake" -DCMAKE_PREFIX_PATH="$T/prefix" \
	>"$T/ex-cmake.log" 2>&1 && cmake --build "$T/ex-cmake" >>"$T/ex-cmake.log" 2>&1
assert_cmd "examples build with find_package(jm4lw)" test $? -eq 0 || cat "$T/ex-cmake.log"

PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" cmake -S "$src/examples" \
	-B "$T/ex-pc" -DJM4LW_EXAMPLE_PKGCONFIG=ON >"$T/ex-pc.log" 2>&1 &&
	cmake --build "$T/ex-pc" >>"$T/ex-pc.log" 2>&1
assert_cmd "examples build with pkg-config" test $? -eq 0 || cat "$T/ex-pc.log"

for variant in ex-cmake ex-pc; do
	svc=$(free_port)
	(exec env LD_LIBRARY_PATH="$T/prefix/lib" MALLOC_CONF=prof:true,prof_active:false \
		"$T/$variant/counter" 127.0.0.1:$svc 127.0.0.1:0 2>"$T/$variant.err") &
	track $!
	port=$(wait_port "$T/$variant.err") || { cat "$T/$variant.err"; fail "$variant: admin port"; continue; }
	exec 3<>/dev/tcp/127.0.0.1/$svc && read -r line <&3; exec 3<&-
	assert_cmd "$variant: the service answers ($line)" test "$line" = "hits 1"
	assert_cmd "$variant: its own word on the admin port" \
		test "$("$JM4LW_CLIENT" -p "$port" hits)" = $'hits\t1'
	assert_cmd "$variant: the built-in words too" test "$("$JM4LW_CLIENT" -p "$port" ruok)" = imok
done
finish
