#!/bin/bash
# cmake --install into a scratch prefix, then build examples/ against it
# twice, as embedders would: find_package(jm4lw) and pkg-config. Then run
# the example and talk to both of its ports.
. "$(dirname "$0")/common.sh"
src=$1
build=$2

cmake --install "$build" --prefix "$WORK/prefix" >"$WORK/install.log" 2>&1
check "cmake --install" test $? -eq 0
for f in include/jm4lw.h lib/libjm4lw.so lib/libjm4lw.a lib/libjm4lw_agent.so \
	lib/pkgconfig/jm4lw.pc lib/cmake/jm4lw/jm4lwConfig.cmake bin/jm4lwd \
	bin/jm4lw bin/jm4lw-run share/doc/jm4lw/examples/jm4lwd.conf; do
	check "installed $f" test -e "$WORK/prefix/$f"
done
preload=$(env JM4LW_AGENT= JM4LW_LISTEN=127.0.0.1:0 JM4LW_QUIET=1 \
	"$WORK/prefix/bin/jm4lw-run" /bin/sh -c 'echo "$LD_PRELOAD"')
check "installed jm4lw-run preloads the installed agent ($preload)" \
	grep -q "$WORK/prefix/bin/../lib/libjm4lw_agent.so" <<<"$preload"

cmake -S "$src/examples" -B "$WORK/ex-cmake" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
	>"$WORK/ex-cmake.log" 2>&1 && cmake --build "$WORK/ex-cmake" >>"$WORK/ex-cmake.log" 2>&1
check "examples build with find_package(jm4lw)" test $? -eq 0 || cat "$WORK/ex-cmake.log"

PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig" cmake -S "$src/examples" \
	-B "$WORK/ex-pc" -DJM4LW_EXAMPLE_PKGCONFIG=ON >"$WORK/ex-pc.log" 2>&1 &&
	cmake --build "$WORK/ex-pc" >>"$WORK/ex-pc.log" 2>&1
check "examples build with pkg-config" test $? -eq 0 || cat "$WORK/ex-pc.log"

for variant in ex-cmake ex-pc; do
	svc=$(free_port)
	(exec env LD_LIBRARY_PATH="$WORK/prefix/lib" MALLOC_CONF=prof:true,prof_active:false \
		"$WORK/$variant/counter" 127.0.0.1:$svc 127.0.0.1:0 2>"$WORK/$variant.err") &
	PIDS="$PIDS $!"
	port=$(wait_port "$WORK/$variant.err") || { cat "$WORK/$variant.err"; fail "$variant: admin port"; continue; }
	exec 3<>/dev/tcp/127.0.0.1/$svc && read -r line <&3; exec 3<&-
	check "$variant: the service answers ($line)" test "$line" = "hits 1"
	check "$variant: its own word on the admin port" \
		test "$("$JM4LW_CLIENT" -p "$port" hits)" = $'hits\t1'
	check "$variant: the built-in words too" test "$("$JM4LW_CLIENT" -p "$port" ruok)" = imok
done
finish
