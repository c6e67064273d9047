package surface

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// A schema is compared by meaning, not as text: local $refs resolved
// (bounded, cycle-safe), keyword order ignored, type: [x] equal to
// type: x, numbers by value. An input schema (what a client sends) breaks
// clients when it narrows; an output schema (what a client reads in
// structuredContent) when it loses or retypes a property.

// maxRefHops bounds one chain of $refs ($ref to a $ref to…).
const maxRefHops = 32

type schemaCmp struct {
	d                *differ
	oldRoot, newRoot any
	input            bool
	subject          string
	active           map[[2]string]bool
	// done are the pairs of $refs compared already: a definition reached
	// by many paths is compared once, and its changes reported at the
	// first path (else $refs that fan out would cost 2^depth).
	done map[[2]string]bool
	deep bool
}

func newSchemaCmp(d *differ, oldRoot, newRoot any, input bool, subject string) *schemaCmp {
	return &schemaCmp{d: d, oldRoot: oldRoot, newRoot: newRoot, input: input, subject: subject, active: map[[2]string]bool{}, done: map[[2]string]bool{}}
}

func (s *schemaCmp) dir() string {
	if s.input {
		return "input"
	}
	return "output"
}

func (s *schemaCmp) add(class Class, kind, ptr, msg string, old, new any) {
	s.d.add(Change{Class: class, Kind: s.dir() + "-" + kind, Subject: s.subject, Pointer: ptr, Message: msg, Old: old, New: new})
}

// deref resolves a node's local $ref chain, the $ref's siblings kept
// over what it points at; the refs followed are returned as its key.
func deref(v any, root any) (any, string) {
	var refs []string
	for range maxRefHops {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			break
		}
		target, ok := lookup(root, ref[1:])
		if !ok {
			break
		}
		refs = append(refs, ref)
		merged := map[string]any{}
		if tm, ok := target.(map[string]any); ok {
			for k, x := range tm {
				merged[k] = x
			}
		} else if target == false {
			merged["not"] = map[string]any{}
		}
		delete(merged, "$ref")
		for k, x := range m {
			if k != "$ref" {
				merged[k] = x
			}
		}
		if tm, ok := target.(map[string]any); ok {
			if next, ok := tm["$ref"]; ok {
				merged["$ref"] = next
			}
		}
		v = merged
	}
	return v, strings.Join(refs, " ")
}

// lookup follows a URI fragment's JSON pointer from root.
func lookup(root any, frag string) (any, bool) {
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	toks, err := schema.SplitPointer(frag)
	if err != nil {
		return nil, false
	}
	return schema.Lookup(root, toks)
}

// asSchema makes a boolean or absent schema an object: true and absent
// accept anything ({}), false nothing ({"not": {}}).
func asSchema(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, true
	case bool:
		if x {
			return map[string]any{}, true
		}
		return map[string]any{"not": map[string]any{}}, true
	case map[string]any:
		return x, true
	}
	return nil, false
}

// The keywords of a person, not of a contract.
var annotationKeywords = map[string]bool{"title": true, "description": true, "examples": true, "default": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true, "contentMediaType": true, "contentEncoding": true}

// The keywords the comparison does not look at by themselves: definitions
// are reached through the $refs that use them.
var skippedKeywords = map[string]bool{"$ref": true, "$defs": true, "definitions": true, "$id": true, "$anchor": true,
	"$dynamicAnchor": true, "$vocabulary": true, "id": true}

// Lower and upper bounds: a lower bound raised or an upper bound lowered
// narrows.
var lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
var upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}

// Keywords whose change cannot be classified exactly.
var undecidedKeywords = map[string]string{"if": "conditional", "then": "conditional", "else": "conditional",
	"not": "not", "dependentRequired": "dependencies", "dependentSchemas": "dependencies", "dependencies": "dependencies",
	"patternProperties": "pattern-properties", "unevaluatedProperties": "unevaluated", "unevaluatedItems": "unevaluated",
	"contains": "contains", "propertyNames": "property-names", "multipleOf": "multiple-of", "$dynamicRef": "ref", "$recursiveRef": "ref"}

func (s *schemaCmp) compare(o, n any, ptr string, depth int) {
	if !s.d.step() {
		return
	}
	if depth > maxSchemaDepth {
		if !s.deep {
			s.deep = true
			s.add(PossiblyBreaking, "schema-too-deep", ptr, fmt.Sprintf("the schemas nest deeper than %d levels: what lies below was not compared", maxSchemaDepth), nil, nil)
		}
		return
	}
	o, oref := deref(o, s.oldRoot)
	n, nref := deref(n, s.newRoot)
	if oref != "" || nref != "" {
		pair := [2]string{oref, nref}
		if s.active[pair] || s.done[pair] {
			return // the same two $refs again: a cycle, or compared already
		}
		s.active[pair] = true
		defer func() { delete(s.active, pair); s.done[pair] = true }()
	}
	om, ok1 := asSchema(o)
	nm, ok2 := asSchema(n)
	if !ok1 || !ok2 {
		if !equal(o, n) {
			s.add(PossiblyBreaking, "schema-changed", ptr, "the schema changed (it is not a JSON Schema object)", o, n)
		}
		return
	}
	s.types(om, nm, ptr)
	s.enum(om, nm, ptr)
	s.properties(om, nm, ptr, depth)
	s.bounds(om, nm, ptr)
	s.strings(om, nm, ptr)
	s.items(om, nm, ptr, depth)
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		s.combinator(kw, om, nm, ptr, depth)
	}
	for _, k := range unionKeys(om, nm) {
		ov, nv := om[k], nm[k]
		if handledKeywords[k] || skippedKeywords[k] || equalUnder(ov, nv) {
			continue
		}
		p := ptr + "/" + schema.EscapeToken(k)
		switch {
		case annotationKeywords[k] || strings.HasPrefix(k, "x-"):
			kind := "schema-annotation-changed"
			if k == "description" || k == "title" {
				kind = "schema-" + k + "-changed"
			}
			s.d.add(Change{Class: Changed, Kind: kind, Subject: s.subject, Pointer: p, Message: fmt.Sprintf("%s changed", k), Old: ov, New: nv})
		case k == "$schema":
			s.d.add(Change{Class: Changed, Kind: "schema-dialect-changed", Subject: s.subject, Pointer: p, Message: "the schema's dialect ($schema) changed", Old: ov, New: nv})
		case undecidedKeywords[k] != "":
			s.add(PossiblyBreaking, undecidedKeywords[k]+"-changed", p, fmt.Sprintf("%s changed: whether values valid before still are cannot be decided exactly", k), ov, nv)
		default:
			s.add(PossiblyBreaking, "keyword-changed", p, fmt.Sprintf("%s changed", k), ov, nv)
		}
	}
}

// equalUnder compares two keyword values by meaning, without resolving
// $refs (a keyword the comparison does not take apart).
func equalUnder(a, b any) bool { return equal(a, b) }

var handledKeywords = map[string]bool{"type": true, "enum": true, "const": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "prefixItems": true, "additionalItems": true, "pattern": true, "format": true,
	"uniqueItems": true, "anyOf": true, "oneOf": true, "allOf": true,
	"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true, "minContains": true,
	"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true, "maxContains": true}

// typeSet returns the types a schema allows; nil for any.
func typeSet(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		sort.Strings(out)
		return out
	}
	return nil
}

// covers says whether the types a allow every value of the types b.
func covers(a, b []string) bool {
	if a == nil {
		return true
	}
	if b == nil {
		return false
	}
	for _, t := range b {
		if !slices.Contains(a, t) && (t != "integer" || !slices.Contains(a, "number")) {
			return false
		}
	}
	return true
}

func typeText(t []string) any {
	switch len(t) {
	case 0:
		return nil
	case 1:
		return t[0]
	}
	return t
}

func (s *schemaCmp) types(om, nm map[string]any, ptr string) {
	ot, nt := typeSet(om), typeSet(nm)
	wider, narrower := covers(nt, ot), covers(ot, nt)
	if wider && narrower {
		return
	}
	p := ptr + "/type"
	old, new := typeText(ot), typeText(nt)
	if s.input {
		if wider {
			s.add(NonBreaking, "type-widened", p, "the input accepts more types than before", old, new)
		} else {
			s.add(Breaking, "type-changed", p, fmt.Sprintf("the type changed from %s to %s: values of the old type are refused", describeType(ot), describeType(nt)), old, new)
		}
		return
	}
	if narrower {
		s.add(NonBreaking, "type-narrowed", p, "the output has fewer types than before", old, new)
	} else {
		s.add(Breaking, "type-changed", p, fmt.Sprintf("the type changed from %s to %s: clients that read the old type break", describeType(ot), describeType(nt)), old, new)
	}
}

func describeType(t []string) string {
	if t == nil {
		return "any"
	}
	return strings.Join(t, " or ")
}

// values returns the values an enum or const allows, by canonical text;
// nil when neither is there.
func values(m map[string]any) (map[string]any, []string) {
	var list []any
	if c, ok := m["const"]; ok {
		list = []any{c}
	} else if e, ok := m["enum"].([]any); ok {
		list = e
	} else {
		return nil, nil
	}
	set := map[string]any{}
	var order []string
	for _, v := range list {
		k := key(v)
		if _, dup := set[k]; !dup {
			set[k] = v
			order = append(order, k)
		}
	}
	return set, order
}

func (s *schemaCmp) enum(om, nm map[string]any, ptr string) {
	os, oorder := values(om)
	ns, norder := values(nm)
	kw := "enum"
	if _, ok := nm["const"]; ok {
		kw = "const"
	} else if _, ok := om["const"]; ok && ns == nil {
		kw = "const"
	}
	p := ptr + "/" + kw
	switch {
	case os == nil && ns == nil:
		return
	case os == nil:
		if s.input {
			s.add(Breaking, "enum-added", p, fmt.Sprintf("the input is now limited to %d value(s)", len(ns)), nil, nm[kw])
		} else {
			s.add(NonBreaking, "enum-added", p, fmt.Sprintf("the output is now limited to %d value(s)", len(ns)), nil, nm[kw])
		}
		return
	case ns == nil:
		if s.input {
			s.add(NonBreaking, "enum-removed", p, "the input is no longer limited to a list of values", om[kw], nil)
		} else {
			s.add(PossiblyBreaking, "enum-removed", p, "the output is no longer limited to a list of values: clients that switch on them may meet others", om[kw], nil)
		}
		return
	}
	var removed, added []any
	for _, k := range oorder {
		if _, ok := ns[k]; !ok {
			removed = append(removed, os[k])
		}
	}
	for _, k := range norder {
		if _, ok := os[k]; !ok {
			added = append(added, ns[k])
		}
	}
	if len(removed) > 0 {
		if s.input {
			s.add(Breaking, "enum-value-removed", p, fmt.Sprintf("%s no longer accepted: clients that send it are refused", valueList(removed)), removed, nil)
		} else {
			s.add(NonBreaking, "enum-value-removed", p, fmt.Sprintf("%s no longer returned", valueList(removed)), removed, nil)
		}
	}
	if len(added) > 0 {
		if s.input {
			s.add(NonBreaking, "enum-value-added", p, fmt.Sprintf("%s now accepted", valueList(added)), nil, added)
		} else {
			s.add(PossiblyBreaking, "enum-value-added", p, fmt.Sprintf("%s may now be returned: clients that switch on the values may not know it", valueList(added)), nil, added)
		}
	}
}

// valueList names a few values for a message.
func valueList(vs []any) string {
	var parts []string
	for i, v := range vs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(vs)-5))
			break
		}
		parts = append(parts, clip(key(v)))
	}
	if len(vs) == 1 {
		return "value " + parts[0] + " is"
	}
	return "values " + strings.Join(parts, ", ") + " are"
}

func requiredSet(m map[string]any) []string {
	var out []string
	list, _ := m["required"].([]any)
	for _, x := range list {
		if s, ok := x.(string); ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// refuses says whether a schema refuses properties it does not list.
func refuses(m map[string]any) bool {
	return m["additionalProperties"] == false || m["unevaluatedProperties"] == false
}

func (s *schemaCmp) properties(om, nm map[string]any, ptr string, depth int) {
	op, nprops := asMap(om["properties"]), asMap(nm["properties"])
	oreq, nreq := requiredSet(om), requiredSet(nm)
	for _, name := range unionKeys(op, nprops) {
		p := ptr + "/properties/" + schema.EscapeToken(name)
		ov, inOld := op[name]
		nv, inNew := nprops[name]
		switch {
		case inOld && !inNew:
			switch {
			case !s.input:
				s.add(Breaking, "property-removed", p, fmt.Sprintf("property %s was removed: clients that read it break", name), nil, nil)
			case refuses(nm):
				s.add(Breaking, "property-removed", p, fmt.Sprintf("property %s was removed and other properties are refused: clients that send it are refused", name), nil, nil)
			default:
				s.add(NonBreaking, "property-removed", p, fmt.Sprintf("property %s was removed; other properties are allowed, so a client that still sends it is not refused", name), nil, nil)
			}
		case !inOld && inNew:
			switch {
			case s.input && slices.Contains(nreq, name):
				s.add(Breaking, "required-property-added", p, fmt.Sprintf("required property %s was added: clients that do not send it are refused", name), nil, nil)
			case s.input:
				s.add(NonBreaking, "property-added", p, fmt.Sprintf("optional property %s was added", name), nil, nil)
			default:
				s.add(NonBreaking, "property-added", p, fmt.Sprintf("property %s was added", name), nil, nil)
			}
		default:
			s.compare(ov, nv, p, depth+1)
		}
	}
	for _, name := range nreq {
		if slices.Contains(oreq, name) {
			continue
		}
		if _, listed := nprops[name]; listed {
			if _, old := op[name]; !old && s.input {
				continue // said above: a required property added
			}
		}
		if s.input {
			s.add(Breaking, "required-grown", ptr+"/required", fmt.Sprintf("%s is now required: clients that leave it out are refused", name), oreq, nreq)
		} else {
			s.add(NonBreaking, "required-grown", ptr+"/required", fmt.Sprintf("%s is now always present", name), oreq, nreq)
		}
	}
	for _, name := range oreq {
		if slices.Contains(nreq, name) {
			continue
		}
		if _, still := nprops[name]; !still && len(op) > 0 {
			if _, was := op[name]; was {
				continue // the property went: said above
			}
		}
		if s.input {
			s.add(NonBreaking, "required-shrunk", ptr+"/required", fmt.Sprintf("%s is no longer required", name), oreq, nreq)
		} else {
			s.add(PossiblyBreaking, "required-shrunk", ptr+"/required", fmt.Sprintf("%s may now be absent: clients that read it may find nothing", name), oreq, nreq)
		}
	}
	oa, na := om["additionalProperties"], nm["additionalProperties"]
	p := ptr + "/additionalProperties"
	switch {
	case equal(oa, na):
	case na == false:
		if s.input {
			s.add(Breaking, "additional-properties-refused", p, "properties the schema does not list are now refused", oa, na)
		} else {
			s.add(NonBreaking, "additional-properties-refused", p, "the output no longer has properties its schema does not list", oa, na)
		}
	case oa == false:
		if s.input {
			s.add(NonBreaking, "additional-properties-allowed", p, "properties the schema does not list are now accepted", oa, na)
		} else {
			s.add(PossiblyBreaking, "additional-properties-allowed", p, "the output may have properties its schema does not list", oa, na)
		}
	default:
		s.compare(oa, na, p, depth+1)
	}
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	}
	return 0, false
}

func (s *schemaCmp) bounds(om, nm map[string]any, ptr string) {
	check := func(kw string, lower bool) {
		ov, oOK := om[kw]
		nv, nOK := nm[kw]
		if !oOK && !nOK || equal(ov, nv) {
			return
		}
		of, oNum := number(ov)
		nf, nNum := number(nv)
		p := ptr + "/" + kw
		if (oOK && !oNum) || (nOK && !nNum) {
			// exclusiveMinimum: true of draft 4, or worse.
			s.add(PossiblyBreaking, "bound-changed", p, fmt.Sprintf("%s changed", kw), ov, nv)
			return
		}
		var tighter bool
		switch {
		case !oOK:
			tighter = true
		case !nOK:
			tighter = false
		case lower:
			tighter = nf > of
		default:
			tighter = nf < of
		}
		switch {
		case tighter && s.input:
			s.add(Breaking, "bound-tightened", p, fmt.Sprintf("%s tightened: values valid before are refused", kw), ov, nv)
		case !tighter && s.input:
			s.add(NonBreaking, "bound-loosened", p, fmt.Sprintf("%s loosened", kw), ov, nv)
		case tighter:
			s.add(NonBreaking, "bound-tightened", p, fmt.Sprintf("%s tightened", kw), ov, nv)
		default:
			s.add(PossiblyBreaking, "bound-loosened", p, fmt.Sprintf("%s loosened: clients may read values they did not expect", kw), ov, nv)
		}
	}
	for _, kw := range lowerBounds {
		check(kw, true)
	}
	for _, kw := range upperBounds {
		check(kw, false)
	}
	ou, nu := om["uniqueItems"] == true, nm["uniqueItems"] == true
	if ou != nu {
		p := ptr + "/uniqueItems"
		switch {
		case nu && s.input:
			s.add(Breaking, "bound-tightened", p, "items must now be unique", om["uniqueItems"], nm["uniqueItems"])
		case nu:
			s.add(NonBreaking, "bound-tightened", p, "items are now unique", om["uniqueItems"], nm["uniqueItems"])
		case s.input:
			s.add(NonBreaking, "bound-loosened", p, "items need no longer be unique", om["uniqueItems"], nm["uniqueItems"])
		default:
			s.add(PossiblyBreaking, "bound-loosened", p, "items may now repeat", om["uniqueItems"], nm["uniqueItems"])
		}
	}
}

// strings compares pattern and format.
func (s *schemaCmp) strings(om, nm map[string]any, ptr string) {
	for _, kw := range []string{"pattern", "format"} {
		ov, oOK := om[kw]
		nv, nOK := nm[kw]
		p := ptr + "/" + kw
		switch {
		case equal(ov, nv):
		case !oOK && s.input:
			s.add(Breaking, kw+"-added", p, fmt.Sprintf("a %s was added: values that do not match it are refused", kw), nil, nv)
		case !oOK:
			s.add(NonBreaking, kw+"-added", p, fmt.Sprintf("a %s was added", kw), nil, nv)
		case !nOK && s.input:
			s.add(NonBreaking, kw+"-removed", p, fmt.Sprintf("the %s was removed", kw), ov, nil)
		case !nOK:
			s.add(PossiblyBreaking, kw+"-removed", p, fmt.Sprintf("the %s was removed: clients may read values that do not match the old one", kw), ov, nil)
		default:
			s.add(PossiblyBreaking, kw+"-changed", p, fmt.Sprintf("the %s changed: whether the values of the old one match the new cannot be decided exactly", kw), ov, nv)
		}
	}
}

func (s *schemaCmp) items(om, nm map[string]any, ptr string, depth int) {
	oi, oOK := om["items"]
	ni, nOK := nm["items"]
	_, oTuple := oi.([]any)
	_, nTuple := ni.([]any)
	switch {
	case !oOK && !nOK:
	case oTuple || nTuple:
		s.tuple(oi, ni, ptr+"/items", depth)
	default:
		s.compare(oi, ni, ptr+"/items", depth+1)
	}
	s.tuple(om["prefixItems"], nm["prefixItems"], ptr+"/prefixItems", depth)
	if oa, na := om["additionalItems"], nm["additionalItems"]; !equal(oa, na) {
		s.compare(oa, na, ptr+"/additionalItems", depth+1)
	}
}

// tuple compares positional item schemas.
func (s *schemaCmp) tuple(o, n any, ptr string, depth int) {
	ol, _ := o.([]any)
	nl, _ := n.([]any)
	if o == nil && n == nil {
		return
	}
	if len(ol) != len(nl) {
		s.add(PossiblyBreaking, "tuple-changed", ptr, fmt.Sprintf("the positional items changed from %d to %d", len(ol), len(nl)), o, n)
		return
	}
	for i := range ol {
		s.compare(ol[i], nl[i], ptr+"/"+strconv.Itoa(i), depth+1)
	}
}

// combinator compares anyOf, oneOf or allOf: element by element when
// only their insides changed, as undecidable when they were restructured.
func (s *schemaCmp) combinator(kw string, om, nm map[string]any, ptr string, depth int) {
	ov, oOK := om[kw]
	nv, nOK := nm[kw]
	if !oOK && !nOK {
		return
	}
	ol, _ := ov.([]any)
	nl, _ := nv.([]any)
	p := ptr + "/" + kw
	if oOK && nOK && len(ol) == len(nl) {
		if sameMultiset(ol, nl) {
			return // reordered
		}
		for i := range ol {
			s.compare(ol[i], nl[i], p+"/"+strconv.Itoa(i), depth+1)
		}
		return
	}
	s.add(PossiblyBreaking, strings.ToLower(kw)+"-restructured", p,
		fmt.Sprintf("%s was restructured (%d alternatives before, %d now): whether values valid before still are cannot be decided exactly", kw, len(ol), len(nl)), ov, nv)
}

func sameMultiset(a, b []any) bool {
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i] = key(a[i])
	}
	for i := range b {
		kb[i] = key(b[i])
	}
	sort.Strings(ka)
	sort.Strings(kb)
	return slices.Equal(ka, kb)
}
