package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// mcpiRun runs the built binary and returns its exit code and output.
func mcpiRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBinary(t, mcpiBinary(t), nil, args...)
}

// runBinary runs bin with args (and env, when not nil) and returns its
// exit code and output.
func runBinary(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

func TestBinaryBasics(t *testing.T) {
	t.Parallel()
	bin := mcpiBinary(t)
	code, out, _ := mcpiRun(t, "--version")
	if code != 0 || !strings.Contains(out, command.Version) {
		t.Errorf("--version: %d %q", code, out)
	}
	code, out, errOut := mcpiRun(t, "demo")
	if code != 0 || !strings.Contains(out, "mcpi-demo") || !strings.Contains(out, "long_running") {
		t.Errorf("demo: %d\n%s\n%s", code, out, errOut)
	}
	// stdout carries data only: the JSON parses whole and stderr is quiet.
	code, out, errOut = mcpiRun(t, "tools", "--json", "--", bin, "demo-server")
	var tools []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &tools) != nil || len(tools) < 15 || errOut != "" {
		t.Errorf("tools --json: %d, %d tools, stderr %q", code, len(tools), errOut)
	}
	code, out, _ = mcpiRun(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_mcpi") {
		t.Errorf("completion bash: %d", code)
	}
	for _, sh := range []string{"zsh", "fish", "powershell"} {
		if code, out, _ := mcpiRun(t, "completion", sh); code != 0 || len(out) == 0 {
			t.Errorf("completion %s: %d", sh, code)
		}
	}
	if code, _, errOut := mcpiRun(t, "completion", "tcsh"); code != 2 {
		t.Errorf("completion tcsh: %d %s", code, errOut)
	}
}

func TestBinaryInterrupted(t *testing.T) {
	t.Parallel()
	bin := mcpiBinary(t)
	cmd := exec.Command(bin, "call", "slow", "ms=60000", "-v", "--", bin, "demo-server")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	deadline := time.After(20 * time.Second)
wait:
	for {
		select {
		case l := <-lines:
			seen = append(seen, l)
			if strings.Contains(l, "spawned pid") {
				break wait
			}
		case <-deadline:
			t.Fatalf("no spawn line: %v", seen)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		for l := range lines {
			seen = append(seen, l)
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 130 {
			t.Errorf("want exit 130, got %v\n%s", err, strings.Join(seen, "\n"))
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mcpi did not stop on SIGINT")
	}
	joined := strings.Join(seen, "\n")
	if !strings.Contains(joined, "interrupted") || !strings.Contains(joined, "transport: exited") {
		t.Errorf("stderr should say interrupted and show the server shut down:\n%s", joined)
	}
}

func TestBinaryAgainstEverything(t *testing.T) {
	t.Parallel()
	ev := mcptest.Everything(t)
	target := append([]string{"--"}, ev...)
	root := filepath.ToSlash(t.TempDir())
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"tools"}, 0, "trigger-sampling-request"},
		{[]string{"resources"}, 0, "demo://resource/"},
		{[]string{"templates"}, 0, "{"},
		{[]string{"prompts"}, 0, "simple-prompt"},
		{[]string{"info"}, 0, "tasks"},
		{[]string{"ping"}, 0, "pong"},
		{[]string{"call", "echo", "message=hello everything"}, 0, "hello everything"},
		{[]string{"call", "get-sum", "a=1", "b=2"}, 0, "3"},
		{[]string{"call", "get-tiny-image"}, 0, "[image image/png"},
		{[]string{"call", "trigger-sampling-request", "prompt=hi", "--sampling-reply", "sampled!"}, 0, "sampled!"},
		{[]string{"call", "get-roots-list", "--root", root}, 0, "file://" + root},
		{[]string{"call", "trigger-elicitation-request", "--elicit", "accept", "--elicit-field", "name=Zed"}, 0, "Zed"},
		{[]string{"call", "trigger-elicitation-request", "--elicit", "decline"}, 0, "decline"},
		{[]string{"call", "get-structured-content", "location=New York"}, 0, "temperature"},
		{[]string{"call", "get-sum", "a=1", "b=2", "--json"}, 0, `"content":[`},
		{[]string{"prompt", "simple-prompt"}, 0, "[user]"},
		{[]string{"read", "demo://resource/static/document/architecture.md"}, 0, "#"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errOut := mcpiRun(t, append(tc.args, target...)...)
			if code != tc.code || !strings.Contains(out, tc.stdout) {
				t.Errorf("exit %d (want %d), stdout lacks %q:\n%s\nstderr:\n%s", code, tc.code, tc.stdout, out, errOut)
			}
		})
	}
}
