package mcptext

import (
	"regexp"
	"slices"
	"strings"
)

var templateExpr = regexp.MustCompile(`\{([+#./;?&]?)([^}]*)\}`)

// TemplateVariables names the variables of an RFC 6570 URI template.
func TemplateVariables(t string) []string {
	var out []string
	for _, m := range templateExpr.FindAllStringSubmatch(t, -1) {
		for _, v := range strings.Split(m[2], ",") {
			v, _, _ = strings.Cut(strings.TrimSuffix(strings.TrimSpace(v), "*"), ":")
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}
