package cmdutil

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A flag is in the group that was open when it was defined; a nested
// helper's group wins over the one around it; help lists each group under
// its title, in FlagGroups' order.
func TestFlagGroups(t *testing.T) {
	cmd := &cobra.Command{Use: "x", Run: func(*cobra.Command, []string) {}}
	var s string
	var b bool
	end := FlagGroup(cmd, GroupConnection)
	cmd.Flags().StringVar(&s, "url", "", "the server")
	AddJSONFlag(cmd, &b, "print JSON")
	end()
	end = FlagGroup(cmd, GroupArgs)
	cmd.Flags().StringVar(&s, "args", "", "the arguments")
	end()
	cmd.Flags().BoolVar(&b, "loose", false, "in no group")
	ApplyFlagGroups(cmd)
	for name, want := range map[string]string{"url": GroupConnection, "json": GroupOutput, "args": GroupArgs, "loose": ""} {
		if got := FlagGroupOf(cmd.Flags().Lookup(name)); got != want {
			t.Errorf("--%s is in %q, want %q", name, got, want)
		}
	}
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := Usage(cmd); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	order := []string{"Arguments and answers:", "--args", "Output:", "--json", "Connection:", "--url", "Flags:", "--loose"}
	at := 0
	for _, w := range order {
		i := strings.Index(help[at:], w)
		if i < 0 {
			t.Fatalf("help lacks %q after what comes before it:\n%s", w, help)
		}
		at += i
	}
}
