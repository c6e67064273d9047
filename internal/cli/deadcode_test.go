package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryKeepsNoDeadMethods: the linker drops the methods mcpi never
// calls. It cannot once anything reachable finds methods by name
// (reflect's MethodByName: text/template executing a template, such as a
// cobra usage template); it then keeps every exported method of every
// type, the model SDKs' thousands included, and mcpi grows by a fifth
// and starts slower. An SDK method mcpi never calls must be absent, one
// it calls present.
func TestBinaryKeepsNoDeadMethods(t *testing.T) {
	bin := mcpiBinary(t)
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := string(out)
	const svc = "github.com/openai/openai-go/v3.(*ChatCompletionService)."
	if !strings.Contains(syms, svc+"NewStreaming\n") {
		t.Fatalf("the binary lacks %sNewStreaming, which mcpi calls: the test looks at the wrong names", svc)
	}
	if strings.Contains(syms, svc+"Delete\n") {
		t.Errorf("the binary keeps %sDelete, which mcpi never calls: something reachable finds methods by name (a text/template executed? see usage in flaggroups.go)", svc)
	}
}
