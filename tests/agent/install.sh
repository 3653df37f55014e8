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
