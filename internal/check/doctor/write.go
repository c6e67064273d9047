package doctor

import (
	"fmt"
	"io"
)

// Write prints the checklist for a person; refused says the server was
// reached, and refused the request.
func Write(w io.Writer, rep Report, refused bool) {
	if refused {
		fmt.Fprintf(w, "mcpi check was refused by %s. Step by step:\n", rep.Target)
	} else {
		fmt.Fprintf(w, "mcpi check could not reach %s. Step by step:\n", rep.Target)
	}
	marks := map[string]string{Passed: "ok  ", Failed: "FAIL", Skipped: "-   "}
	for _, s := range rep.Steps {
		line := fmt.Sprintf("  %s %s", marks[s.Status], s.Name)
		if s.Detail != "" {
			line += ": " + s.Detail
		}
		fmt.Fprintln(w, line)
		if s.Fix != "" {
			fmt.Fprintf(w, "       what to do: %s\n", s.Fix)
		}
	}
	if rep.Environment != "" {
		fmt.Fprintf(w, "This looks like the server's environment, not its protocol: %s. Check the server's configuration (its environment variables, credentials and the services it needs).\n", rep.Environment)
	}
}
