package mcptext

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// DisplayName is a name with its title when the title says more.
func DisplayName(title, name string) string {
	if title != "" && title != name {
		return name + " (" + title + ")"
	}
	return name
}

// Table starts a table with a row of headers: Row adds the rows, Flush
// ends it.
func Table(w io.Writer, headers ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	return tw
}

// Row prints one table row; every cell is server text, so each is
// sanitised and folded onto one line, and long ones are cut.
func Row(tw io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = safetext.Truncate(safetext.OneLine(c), 80)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}
