package perf_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// initOnlyEnv makes the re-executed test binary exit as soon as its
// package inits have run.
const initOnlyEnv = "MCPI_PERF_INIT_ONLY"

// maxInitBytes is what one of mcpi's packages may allocate in its init.
// Every mcpi process runs every init, --version and a shell's TAB included:
// a table, a regexp or a registry that only some commands use is built on
// first use (sync.OnceValue), not there.
const maxInitBytes = 64 << 10

// TestInitAllocations runs the package inits of mcpi (this test binary
// links internal/cli, so all of them) under GODEBUG=inittrace=1 and checks
// that none of mcpi's own packages allocates more than maxInitBytes.
// Allocations, not time: they do not depend on the machine's load.
func TestInitAllocations(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), initOnlyEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.Bytes())
	}
	seen := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		pkg, b, ok := initBytes(sc.Text())
		if !ok || !strings.HasPrefix(pkg, "github.com/mcpi-dev/mcpi/") {
			continue
		}
		seen++
		if b > maxInitBytes {
			t.Errorf("%s allocates %d bytes in its init, more than %d: build it on first use", pkg, b, maxInitBytes)
		}
	}
	if seen == 0 {
		t.Fatalf("no init of mcpi's packages in the trace:\n%s", stderr.Bytes())
	}
}

// initBytes reads a line of GODEBUG=inittrace=1:
//
//	init github.com/mcpi-dev/mcpi/internal/cli @2.1 ms, 0.06 ms clock, 51696 bytes, 745 allocs
func initBytes(line string) (pkg string, n int, ok bool) {
	f := strings.Fields(line)
	if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
		return "", 0, false
	}
	n, err := strconv.Atoi(f[7])
	return f[1], n, err == nil
}

// notLinked are module paths mcpi must not link: every start pays for what
// is linked (its inits, a larger image), and these come only with
// exporters that mcpi's own OTLP/HTTP export replaces (internal/otlp).
var notLinked = []string{"google.golang.org/grpc", "google.golang.org/protobuf", "go.opentelemetry.io/proto/otlp",
	"go.opentelemetry.io/otel/exporters/"}

func TestBinaryLinksNoGRPC(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/mcpi-dev/mcpi/cmd/mcpi").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for pkg := range strings.SplitSeq(string(out), "\n") {
		for _, p := range notLinked {
			if strings.HasPrefix(pkg, p) {
				t.Errorf("mcpi links %s", pkg)
			}
		}
	}
}
