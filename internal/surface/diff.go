package surface

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Class says what a change does to the clients of a server.
type Class string

// The classes, from the worst.
const (
	// Breaking: a client that worked with the old server may fail with
	// the new one (a tool it calls is gone, an argument it sends is
	// refused, a field it reads is missing).
	Breaking Class = "breaking"
	// PossiblyBreaking: what cannot be decided exactly (a pattern
	// changed, an anyOf restructured, if/then), said as such.
	PossiblyBreaking Class = "possibly-breaking"
	// NonBreaking: anything added that nothing required; an input
	// widened.
	NonBreaking Class = "non-breaking"
	// Changed: what changes no contract but a person should see:
	// descriptions (a prompt-injection review reads them), titles, icons,
	// annotations otherwise.
	Changed Class = "changed"
)

// Classes are the classes in the order reports give them.
var Classes = []Class{Breaking, PossiblyBreaking, NonBreaking, Changed}

func (c Class) rank() int { return slices.Index(Classes, c) }

// Change is one difference between two surfaces.
type Change struct {
	Class Class `json:"class"`
	// Kind names the rule ("tool-removed", "input-required-property-added");
	// docs/cli.md lists them.
	Kind string `json:"kind"`
	// Subject is what changed, for a person: "tool fetch".
	Subject string `json:"subject"`
	// Pointer is a JSON pointer to what changed in the surface, with
	// tools, prompts, resources and templates named by their name, URI or
	// URI template rather than their position:
	// /tools/fetch/inputSchema/properties/url.
	Pointer string `json:"pointer"`
	Message string `json:"message"`
	Old     any    `json:"old,omitempty"`
	New     any    `json:"new,omitempty"`
}

// maxSteps bounds the work of one Diff (schema nodes compared): $refs
// that expand without end or a schema of millions of nodes end the
// comparison with a possibly-breaking change that says so.
const maxSteps = 500_000

// maxSchemaDepth bounds how deep a schema comparison goes.
const maxSchemaDepth = 64

type differ struct {
	out     []Change
	steps   int
	stopped bool
}

func (d *differ) add(c Change) { d.out = append(d.out, c) }

// step counts one unit of work; false once the budget is spent.
func (d *differ) step() bool {
	d.steps++
	if d.steps <= maxSteps {
		return true
	}
	if !d.stopped {
		d.stopped = true
		d.add(Change{Class: PossiblyBreaking, Kind: "comparison-incomplete", Subject: "the surface", Pointer: "",
			Message: fmt.Sprintf("the comparison stopped after %d schema nodes: what it did not reach may have changed", maxSteps)})
	}
	return false
}

// Diff returns the changes from old to new, the worst class first, in
// the order of the surfaces within a class. Lists either side does not
// know (nil) are not compared (NotCompared says which). The pointers
// either snapshot ignored are left out of both.
func Diff(old, new *Snapshot) []Change {
	old, new = withIgnored(old, new)
	d := &differ{}
	pairs := erasOf(old, new, d)
	for _, p := range pairs {
		d.surface(p.old, p.new, p.prefix, p.label)
	}
	sort.SliceStable(d.out, func(i, j int) bool { return d.out[i].Class.rank() < d.out[j].Class.rank() })
	return d.out
}

// withIgnored leaves out of both snapshots what either ignored.
func withIgnored(old, new *Snapshot) (*Snapshot, *Snapshot) {
	var ps []string
	for _, p := range append(slices.Clone(old.Ignored), new.Ignored...) {
		if !contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return old, new
	}
	cp := func(s *Snapshot) *Snapshot {
		var c Snapshot
		if roundTrip(s, &c) != nil {
			return s
		}
		if c.Ignore(ps) != nil {
			return s
		}
		return &c
	}
	return cp(old), cp(new)
}

type eraPair struct {
	old, new      *Surface
	prefix, label string
}

// erasOf pairs the surfaces of the two snapshots by era, and says which
// era a server stopped or started speaking.
func erasOf(old, new *Snapshot, d *differ) []eraPair {
	byEra := func(s *Snapshot) map[string]*Surface {
		m := map[string]*Surface{s.Era: &s.Surface}
		if s.OtherEra != nil {
			m[s.OtherEra.Era] = s.OtherEra
		}
		return m
	}
	nm := byEra(new)
	pairs := []eraPair{}
	if ns, ok := nm[old.Era]; ok || old.Era == "" || new.Era == "" {
		if !ok {
			ns = &new.Surface
		}
		pairs = append(pairs, eraPair{old: &old.Surface, new: ns})
	}
	if old.OtherEra != nil {
		if ns, ok := nm[old.OtherEra.Era]; ok {
			pairs = append(pairs, eraPair{old: old.OtherEra, new: ns, prefix: "/otherEra", label: " (" + old.OtherEra.Era + " era)"})
		}
	}
	if len(pairs) == 0 {
		// No era in common: compare what each spoke first.
		pairs = append(pairs, eraPair{old: &old.Surface, new: &new.Surface})
	}
	if old.Eras != nil && new.Eras != nil {
		for _, e := range old.Eras {
			if !slices.Contains(new.Eras, e) {
				d.add(Change{Class: Breaking, Kind: "era-removed", Subject: "the " + e + " era", Pointer: "/eras",
					Message: fmt.Sprintf("the server no longer speaks the %s era: hosts that speak only it cannot connect", e), Old: e})
			}
		}
		for _, e := range new.Eras {
			if !slices.Contains(old.Eras, e) {
				d.add(Change{Class: NonBreaking, Kind: "era-added", Subject: "the " + e + " era", Pointer: "/eras",
					Message: fmt.Sprintf("the server now speaks the %s era too", e), New: e})
			}
		}
	}
	return pairs
}

// NotCompared says which parts of the surfaces were not compared because
// one side does not know them (a trace that never listed them).
func NotCompared(old, new *Snapshot) []string {
	var out []string
	check := func(what string, o, n bool) {
		switch {
		case o && n:
			out = append(out, what+": neither side holds them")
		case o:
			out = append(out, what+": OLD does not hold them")
		case n:
			out = append(out, what+": NEW does not hold them")
		}
	}
	a, b := &old.Surface, &new.Surface
	check("server info", a.ServerInfo == nil, b.ServerInfo == nil)
	check("capabilities", a.Capabilities == nil, b.Capabilities == nil)
	check("tools", a.Tools == nil, b.Tools == nil)
	check("resources", a.Resources == nil, b.Resources == nil)
	check("resource templates", a.Templates == nil, b.Templates == nil)
	check("prompts", a.Prompts == nil, b.Prompts == nil)
	return out
}

func (d *differ) surface(o, n *Surface, prefix, label string) {
	if o.Revision != "" && n.Revision != "" && o.Revision != n.Revision {
		d.add(Change{Class: Changed, Kind: "revision-changed", Subject: "the protocol revision" + label, Pointer: prefix + "/revision",
			Message: fmt.Sprintf("the negotiated revision changed from %s to %s", o.Revision, n.Revision), Old: o.Revision, New: n.Revision})
	}
	if o.ServerInfo != nil && n.ServerInfo != nil {
		for _, k := range unionKeys(o.ServerInfo, n.ServerInfo) {
			ov, nv := o.ServerInfo[k], n.ServerInfo[k]
			if !equal(ov, nv) {
				d.add(Change{Class: Changed, Kind: "server-info-changed", Subject: "server info" + label, Pointer: prefix + "/serverInfo/" + schema.EscapeToken(k),
					Message: fmt.Sprintf("serverInfo.%s changed", k), Old: ov, New: nv})
			}
		}
	}
	if o.Capabilities != nil && n.Capabilities != nil {
		d.capabilities(o.Capabilities, n.Capabilities, prefix+"/capabilities", "capabilities", label)
	}
	if o.Instructions != n.Instructions && o.ServerInfo != nil && n.ServerInfo != nil {
		d.add(Change{Class: Changed, Kind: "instructions-changed", Subject: "the instructions" + label, Pointer: prefix + "/instructions",
			Message: "the server's instructions to the model changed", Old: o.Instructions, New: n.Instructions})
	}
	if o.ClientCapabilities != nil && n.ClientCapabilities != nil && !equal(o.ClientCapabilities, n.ClientCapabilities) {
		d.add(Change{Class: Changed, Kind: "client-capabilities-changed", Subject: "the client's capabilities" + label, Pointer: prefix + "/clientCapabilities",
			Message: "mcpi declared other capabilities: a server may list differently for them", Old: o.ClientCapabilities, New: n.ClientCapabilities})
	}
	if o.Tools != nil && n.Tools != nil {
		d.entries(kindTool, o.Tools, n.Tools, prefix, label)
	}
	if o.Resources != nil && n.Resources != nil {
		d.entries(kindResource, o.Resources, n.Resources, prefix, label)
	}
	if o.Templates != nil && n.Templates != nil {
		d.entries(kindTemplate, o.Templates, n.Templates, prefix, label)
	}
	if o.Prompts != nil && n.Prompts != nil {
		d.entries(kindPrompt, o.Prompts, n.Prompts, prefix, label)
	}
}

// capabilities compares two capability objects: what was declared and
// is no more is removed (breaking), what is new added.
func (d *differ) capabilities(o, n map[string]any, ptr, path, label string) {
	for _, k := range unionKeys(o, n) {
		ov, oOK := o[k]
		nv, nOK := n[k]
		p, name := ptr+"/"+schema.EscapeToken(k), path+"."+k
		switch {
		case oOK && declared(ov) && (!nOK || !declared(nv)):
			d.add(Change{Class: Breaking, Kind: "capability-removed", Subject: "capability " + strings.TrimPrefix(name, "capabilities.") + label, Pointer: p,
				Message: fmt.Sprintf("the server no longer declares %s: clients that use it fail", name), Old: ov, New: nv})
		case (!oOK || !declared(ov)) && nOK && declared(nv):
			d.add(Change{Class: NonBreaking, Kind: "capability-added", Subject: "capability " + strings.TrimPrefix(name, "capabilities.") + label, Pointer: p,
				Message: fmt.Sprintf("the server now declares %s", name), Old: ov, New: nv})
		case oOK && nOK:
			om, ok1 := ov.(map[string]any)
			nm, ok2 := nv.(map[string]any)
			if ok1 && ok2 {
				d.capabilities(om, nm, p, name, label)
			} else if !equal(ov, nv) {
				d.add(Change{Class: Changed, Kind: "capability-changed", Subject: "capability " + strings.TrimPrefix(name, "capabilities.") + label, Pointer: p,
					Message: fmt.Sprintf("%s changed", name), Old: ov, New: nv})
			}
		}
	}
}

// declared says whether a capability's value declares it: anything but
// false and null.
func declared(v any) bool { return v != nil && v != false }

// The kinds of entries, and how each is keyed and compared.
type entryKind struct {
	noun, list, key string
	shape           []string // the fields that make its shape (a rename keeps them)
}

var (
	kindTool     = entryKind{noun: "tool", list: "tools", key: "name", shape: []string{"inputSchema", "outputSchema"}}
	kindPrompt   = entryKind{noun: "prompt", list: "prompts", key: "name", shape: []string{"arguments"}}
	kindResource = entryKind{noun: "resource", list: "resources", key: "uri", shape: []string{"name", "mimeType"}}
	kindTemplate = entryKind{noun: "template", list: "resourceTemplates", key: "uriTemplate", shape: []string{"name", "mimeType"}}
)

func keyOf(e Entry, field string) string {
	s, _ := e[field].(string)
	return s
}

// entries compares two lists by key (a tool's name, a resource's URI),
// never by position.
func (d *differ) entries(k entryKind, o, n []Entry, prefix, label string) {
	om, nm := index(o, k.key), index(n, k.key)
	var removed, added []string
	for _, e := range o {
		if key := keyOf(e, k.key); nm[key] == nil && om[key] != nil && !slices.Contains(removed, key) {
			removed = append(removed, key)
		}
	}
	for _, e := range n {
		if key := keyOf(e, k.key); om[key] == nil && nm[key] != nil && !slices.Contains(added, key) {
			added = append(added, key)
		}
	}
	shape := func(e Entry) string {
		m := map[string]any{}
		for _, f := range k.shape {
			m[f] = e[f]
		}
		b, _ := canonical(normalize(m), "")
		return string(b)
	}
	for _, key := range removed {
		msg := fmt.Sprintf("%s %s was removed: clients that use it fail", k.noun, key)
		var renamed string
		for _, a := range added {
			if shape(om[key]) == shape(nm[a]) {
				renamed = a
				break
			}
		}
		if renamed != "" {
			msg = fmt.Sprintf("%s %s was removed, and %s was added with the same shape: a rename? Clients that use %s fail", k.noun, key, renamed, key)
		}
		d.add(Change{Class: Breaking, Kind: k.noun + "-removed", Subject: k.noun + " " + key + label, Pointer: prefix + "/" + k.list + "/" + schema.EscapeToken(key),
			Message: msg, Old: key, New: nilIfEmpty(renamed)})
	}
	for _, key := range added {
		d.add(Change{Class: NonBreaking, Kind: k.noun + "-added", Subject: k.noun + " " + key + label, Pointer: prefix + "/" + k.list + "/" + schema.EscapeToken(key),
			Message: fmt.Sprintf("%s %s was added", k.noun, key), New: key})
	}
	compared := map[string]bool{}
	for _, e := range o {
		key := keyOf(e, k.key)
		ne := nm[key]
		if ne == nil || compared[key] {
			continue // removed, or a duplicate of a key already compared
		}
		compared[key] = true
		e = om[key]
		ptr := prefix + "/" + k.list + "/" + schema.EscapeToken(key)
		subject := k.noun + " " + key + label
		switch k.noun {
		case kindTool.noun:
			d.tool(e, ne, ptr, subject)
		case kindPrompt.noun:
			d.prompt(e, ne, ptr, subject)
		default:
			d.resource(k, e, ne, ptr, subject)
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// index maps each key to its first entry.
func index(es []Entry, key string) map[string]Entry {
	m := map[string]Entry{}
	for _, e := range es {
		if k := keyOf(e, key); m[k] == nil {
			m[k] = e
		}
	}
	return m
}

// textual compares the fields whose change is for a person to see.
func (d *differ) textual(o, n Entry, ptr, subject, noun string, fields ...string) {
	for _, f := range fields {
		ov, nv := o[f], n[f]
		if equal(ov, nv) {
			continue
		}
		kind := noun + "-" + strings.ToLower(strings.TrimPrefix(f, "_")) + "-changed"
		d.add(Change{Class: Changed, Kind: kind, Subject: subject, Pointer: ptr + "/" + schema.EscapeToken(f),
			Message: fmt.Sprintf("the %s changed", strings.TrimPrefix(f, "_")), Old: ov, New: nv})
	}
}

func (d *differ) tool(o, n Entry, ptr, subject string) {
	d.textual(o, n, ptr, subject, "tool", "title", "description", "icons", "_meta", "execution")
	d.annotations(asMap(o["annotations"]), asMap(n["annotations"]), ptr+"/annotations", subject)
	os, ns := o["inputSchema"], n["inputSchema"]
	if os == nil {
		os = map[string]any{}
	}
	if ns == nil {
		ns = map[string]any{}
	}
	newSchemaCmp(d, os, ns, true, subject).compare(os, ns, ptr+"/inputSchema", 0)
	oo, no := o["outputSchema"], n["outputSchema"]
	switch {
	case oo != nil && no == nil:
		d.add(Change{Class: Breaking, Kind: "output-schema-removed", Subject: subject, Pointer: ptr + "/outputSchema",
			Message: "the tool no longer declares an output schema: clients that read its structuredContent may get none"})
	case oo == nil && no != nil:
		d.add(Change{Class: NonBreaking, Kind: "output-schema-added", Subject: subject, Pointer: ptr + "/outputSchema",
			Message: "the tool now declares an output schema"})
	case oo != nil:
		newSchemaCmp(d, oo, no, false, subject).compare(oo, no, ptr+"/outputSchema", 0)
	}
	for _, k := range unionKeys(o, n) {
		switch k {
		case "name", "title", "description", "icons", "_meta", "execution", "annotations", "inputSchema", "outputSchema":
			continue
		}
		if !equal(o[k], n[k]) {
			d.add(Change{Class: Changed, Kind: "tool-field-changed", Subject: subject, Pointer: ptr + "/" + schema.EscapeToken(k),
				Message: fmt.Sprintf("%s changed", k), Old: o[k], New: n[k]})
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// The annotation defaults of the spec: a tool is not read-only and, when
// not read-only, destructive, unless it says otherwise.
func readOnly(a map[string]any) bool { return a["readOnlyHint"] == true }
func destructive(a map[string]any) bool {
	return !readOnly(a) && a["destructiveHint"] != false
}

func (d *differ) annotations(o, n map[string]any, ptr, subject string) {
	turned := readOnly(o) && destructive(n)
	if turned {
		d.add(Change{Class: Breaking, Kind: "tool-became-destructive", Subject: subject, Pointer: ptr,
			Message: "the tool was read-only and is now destructive: hosts that call read-only tools without asking would now run it unasked",
			Old:     o, New: n})
	}
	for _, k := range unionKeys(o, n) {
		if turned && (k == "readOnlyHint" || k == "destructiveHint") {
			continue
		}
		if !equal(o[k], n[k]) {
			d.add(Change{Class: Changed, Kind: "tool-annotation-changed", Subject: subject, Pointer: ptr + "/" + schema.EscapeToken(k),
				Message: fmt.Sprintf("annotation %s changed", k), Old: o[k], New: n[k]})
		}
	}
}

func (d *differ) prompt(o, n Entry, ptr, subject string) {
	d.textual(o, n, ptr, subject, "prompt", "title", "description", "icons", "_meta")
	args := func(e Entry) ([]string, map[string]map[string]any) {
		var names []string
		m := map[string]map[string]any{}
		list, _ := e["arguments"].([]any)
		for _, a := range list {
			am := asMap(a)
			name, _ := am["name"].(string)
			if am == nil || m[name] != nil {
				continue
			}
			names = append(names, name)
			m[name] = am
		}
		return names, m
	}
	on, om := args(o)
	nn, nm := args(n)
	for _, name := range on {
		p := ptr + "/arguments/" + schema.EscapeToken(name)
		if nm[name] == nil {
			d.add(Change{Class: PossiblyBreaking, Kind: "prompt-argument-removed", Subject: subject, Pointer: p,
				Message: fmt.Sprintf("argument %s was removed: a client that still sends it may be refused or ignored", name), Old: name})
			continue
		}
		oa, na := om[name], nm[name]
		switch or, nr := oa["required"] == true, na["required"] == true; {
		case !or && nr:
			d.add(Change{Class: Breaking, Kind: "prompt-argument-made-required", Subject: subject, Pointer: p + "/required",
				Message: fmt.Sprintf("argument %s is now required: clients that leave it out fail", name), Old: oa["required"], New: na["required"]})
		case or && !nr:
			d.add(Change{Class: NonBreaking, Kind: "prompt-argument-made-optional", Subject: subject, Pointer: p + "/required",
				Message: fmt.Sprintf("argument %s is no longer required", name), Old: oa["required"], New: na["required"]})
		}
		d.textual(oa, na, p, subject, "prompt-argument", "title", "description")
	}
	for _, name := range nn {
		if om[name] != nil {
			continue
		}
		p := ptr + "/arguments/" + schema.EscapeToken(name)
		if nm[name]["required"] == true {
			d.add(Change{Class: Breaking, Kind: "prompt-argument-required-added", Subject: subject, Pointer: p,
				Message: fmt.Sprintf("argument %s was added, required: clients that do not send it fail", name), New: name})
		} else {
			d.add(Change{Class: NonBreaking, Kind: "prompt-argument-added", Subject: subject, Pointer: p,
				Message: fmt.Sprintf("optional argument %s was added", name), New: name})
		}
	}
}

func (d *differ) resource(k entryKind, o, n Entry, ptr, subject string) {
	if !equal(o["mimeType"], n["mimeType"]) {
		d.add(Change{Class: PossiblyBreaking, Kind: k.noun + "-mime-type-changed", Subject: subject, Pointer: ptr + "/mimeType",
			Message: "the MIME type changed: clients that parse the content may not read the new one", Old: o["mimeType"], New: n["mimeType"]})
	}
	d.textual(o, n, ptr, subject, k.noun, "name", "title", "description", "icons", "annotations", "size", "_meta")
	for _, f := range unionKeys(o, n) {
		switch f {
		case k.key, "mimeType", "name", "title", "description", "icons", "annotations", "size", "_meta":
			continue
		}
		if !equal(o[f], n[f]) {
			d.add(Change{Class: Changed, Kind: k.noun + "-field-changed", Subject: subject, Pointer: ptr + "/" + schema.EscapeToken(f),
				Message: fmt.Sprintf("%s changed", f), Old: o[f], New: n[f]})
		}
	}
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys(a, b map[string]any) []string {
	var ks []string
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// normalize makes numbers comparable by value (1, 1.0 and 1e0 are one
// number) and type: [x] the same as type: x.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		if t, ok := m["type"].([]any); ok && len(t) == 1 {
			m["type"] = t[0]
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = normalize(e)
		}
		return s
	}
	return v
}

// equal compares two JSON values by meaning: key order is not kept by
// the decoding anyway, numbers compare by value.
func equal(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// key is a JSON value's canonical text, to put values in sets.
func key(v any) string {
	b, _ := canonical(normalize(v), "")
	return strings.TrimSuffix(string(b), "\n")
}
