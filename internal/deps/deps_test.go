package deps

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mcpi-dev/mcpi/"

// allowed are, for the packages the architecture keeps low, the only
// packages of mcpi they may import; forbidden, for the others, the ones
// they must not. docs/architecture.md says the same in prose.
var (
	allowed = map[string][]string{
		"internal/mcp":         {},
		"internal/bounds":      {},
		"internal/browser":     {},
		"internal/config":      {},
		"internal/schema":      {},
		"internal/demoserver":  {},
		"internal/save":        {},
		"internal/safetext":    {"internal/bounds"},
		"internal/skills":      {"internal/mcp", "internal/bounds"},
		"internal/transport":   {"internal/mcp", "internal/bounds"},
		"internal/session":     {"internal/mcp", "internal/bounds", "internal/transport", "internal/tracectx"},
		"internal/live":        {"internal/bounds"},
		"internal/roots":       {"internal/mcp", "internal/safetext"},
		"internal/specschema":  {"internal/schema"},
		"internal/check/hosts": {"internal/schema"},
		"internal/watch":       {"internal/bounds"},
		"internal/load":        {"internal/bounds"},
		"internal/loadreport":  {"internal/load", "internal/record", "internal/safetext"},
		"internal/loadmcp":     {"internal/bounds", "internal/collection", "internal/load", "internal/loadreport", "internal/mcp", "internal/record", "internal/safetext", "internal/session"},
		"internal/cmdutil":     {},
		"internal/query":       {},
		"internal/eras":        {},
		"internal/mcptext":     {"internal/apps", "internal/bounds", "internal/daemon", "internal/iostreams", "internal/live", "internal/mcp", "internal/safetext", "internal/schema", "internal/session", "internal/skills", "internal/transport"},
		"internal/timeline":    {"internal/daemon", "internal/genai", "internal/iostreams", "internal/mcp", "internal/mcptext", "internal/query", "internal/record", "internal/rows", "internal/safetext", "internal/transport"},
		"internal/iostreams":   {"internal/bounds", "internal/mcp", "internal/safetext", "internal/save"},
		"internal/rows":        {"internal/genai", "internal/mcp", "internal/query", "internal/session", "internal/tracectx", "internal/transport"},
		"internal/genai":       {"internal/transport"},
		"internal/tracectx":    {},
		"internal/intercept":   {"internal/bounds", "internal/query", "internal/rows", "internal/safetext", "internal/transport"},
		"internal/attach":      {"internal/bounds", "internal/intercept", "internal/live", "internal/transport"},
		"internal/otlp":        {"internal/genai", "internal/mcp", "internal/record", "internal/transport", "internal/bounds", "internal/safetext", "internal/tracectx"},
		"internal/collection":  {"internal/schema", "internal/mcp", "internal/safetext", "internal/roots", "internal/session", "internal/daemon", "internal/record", "internal/save"},
		"internal/apps":        {"internal/mcp"},
		"internal/apphost":     {"internal/apps", "internal/bounds", "internal/browser", "internal/mcp", "internal/safetext", "internal/session", "internal/transport"},
		"internal/llm":         {"internal/bounds", "internal/safetext", "internal/strictyaml", "internal/transport"},
		"internal/strictyaml":  {},
		"internal/chat/term":   {"internal/chat", "internal/iostreams", "internal/llm", "internal/safetext"},
		"internal/answer":      {"internal/chat", "internal/daemon", "internal/iostreams", "internal/mcp", "internal/safetext", "internal/schema", "internal/session"},
		"internal/proxyrun":    {"internal/attach", "internal/intercept", "internal/live", "internal/proxy", "internal/query", "internal/record", "internal/transport"},
		"cmd/mcpi":             {"internal/cli"},

		"internal/check/matrix":      {"internal/check", "internal/check/doctor", "internal/config", "internal/record", "internal/safetext"},
		"internal/collection/report": {"internal/collection", "internal/record", "internal/safetext"},

		"internal/shellcomp": {"internal/attach", "internal/auth", "internal/bounds", "internal/chat", "internal/check", "internal/cmdutil", "internal/config",
			"internal/live", "internal/llm", "internal/loadreport", "internal/mcp", "internal/query", "internal/safetext", "internal/schema", "internal/session"},
	}
	forbidden = map[string][]string{
		"internal/record":       {"internal/session", "internal/cli", "internal/tui"},
		"internal/command":      {"internal/cli", "internal/tui"},
		"internal/replay":       {"internal/cli", "internal/tui", "internal/live", "internal/check"},
		"internal/proxy":        {"internal/session", "internal/cli", "internal/tui"},
		"internal/auth":         {"internal/session", "internal/cli", "internal/tui"},
		"internal/check":        {"internal/cli", "internal/tui", "internal/live"},
		"internal/tui":          {"internal/cli", "internal/live"},
		"internal/daemon":       {"internal/cli", "internal/tui"},
		"internal/check/doctor": {"internal/cli", "internal/tui"},
		"internal/surface":      {"internal/cli", "internal/tui", "internal/live", "internal/daemon"},
		// The commands reach the TUI through its root alone: no pane.
		"internal/cli": {"internal/tui/wire", "internal/tui/tools", "internal/tui/logs", "internal/tui/timeline", "internal/tui/resources",
			"internal/tui/prompts", "internal/tui/info", "internal/tui/checkpane", "internal/tui/skillspane", "internal/tui/requestspane", "internal/tui/rootspane",
			"internal/tui/chatpane"},
		"internal/rows": {"internal/tui", "internal/cli"},
		"internal/chat": {"internal/tui", "internal/cli", "internal/daemon"},
		"internal/eval": {"internal/tui", "internal/cli", "internal/daemon", "internal/live", "internal/collection"},
	}
	// testOnly packages are imported by tests alone.
	testOnly = []string{"internal/mcptest", "internal/auth/authtest", "internal/record/redacttest"}
	// terminal and command-line libraries stay out of the core.
	noFrontEnd = map[string][]string{
		"internal/session":   {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/transport": {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/check":     {"github.com/spf13/cobra", "charm.land/"},
		"internal/surface":   {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/rows":      {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/llm":       {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/chat":      {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/eval":      {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
		"internal/shellcomp": {"charm.land/", "golang.org/x/term"}, // cobra's completions, no terminal
		"internal/answer":    {"github.com/spf13/cobra", "charm.land/", "golang.org/x/term"},
	}
)

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// within reports whether path is pkg or one of its subpackages.
func within(path, pkg string) bool { return path == pkg || strings.HasPrefix(path, pkg+"/") }

// TestImportRules keeps the import rules of docs/architecture.md.
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 30 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	for _, p := range pkgs {
		if within(p.ImportPath, "internal/perf") || within(p.ImportPath, "internal/deps") {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				for owner, libs := range noFrontEnd {
					if within(p.ImportPath, owner) {
						for _, l := range libs {
							if strings.HasPrefix(imp, l) {
								t.Errorf("%s imports %s: the core stays free of front-end libraries", p.ImportPath, imp)
							}
						}
					}
				}
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			for _, to := range testOnly {
				if within(imp, to) && !within(p.ImportPath, to) {
					t.Errorf("%s imports %s, which only tests may", p.ImportPath, imp)
				}
			}
			if ok, listed := allowed[p.ImportPath]; listed {
				found := false
				for _, a := range ok {
					if imp == a {
						found = true
					}
				}
				if !found {
					t.Errorf("%s imports %s: docs/architecture.md allows it %v only", p.ImportPath, imp, ok)
				}
			}
			for owner, no := range forbidden {
				if within(p.ImportPath, owner) {
					for _, n := range no {
						if within(imp, n) {
							t.Errorf("%s imports %s, which docs/architecture.md forbids it", p.ImportPath, imp)
						}
					}
				}
			}
		}
	}
}

// TestEveryPackageIsInTheArchitecture: each package has its row (or its
// line) in docs/architecture.md.
func TestEveryPackageIsInTheArchitecture(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range listPackages(t) {
		if strings.Count(p.ImportPath, "/") > 1 && !strings.HasPrefix(p.ImportPath, "internal/tui/") && !strings.HasPrefix(p.ImportPath, "internal/auth/") {
			continue // a package's own commands (internal/perf/cmd/...)
		}
		last := p.ImportPath[strings.LastIndex(p.ImportPath, "/")+1:]
		if strings.HasPrefix(p.ImportPath, "internal/tui/") && strings.Contains(string(doc), "`"+last+"`") {
			continue // the TUI's table names its panes by their last word
		}
		if !strings.Contains(string(doc), "`"+p.ImportPath+"`") {
			t.Errorf("docs/architecture.md does not name %s", p.ImportPath)
		}
	}
}
