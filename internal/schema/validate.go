package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds that keep a hostile schema or value from running away: how deep
// evaluation may nest (schema and value together), and how many subschema
// evaluations one Validate may make in all.
const (
	maxDepth = 2000
	maxSteps = 10_000_000
)

// loc is an instance location, built as a linked list while descending.
type loc struct {
	parent *loc
	tok    string
}

func (l *loc) pointer() string {
	if l == nil {
		return ""
	}
	var toks []string
	for ; l != nil; l = l.parent {
		toks = append(toks, l.tok)
	}
	var b strings.Builder
	for i := len(toks) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(escapeToken(toks[i]))
	}
	return b.String()
}

func (l *loc) child(tok string) *loc { return &loc{l, tok} }

// annot collects which properties and items of the instance at hand some
// subschema evaluated successfully, for unevaluatedProperties/Items.
type annot struct {
	props    map[string]bool
	allProps bool
	items    int // items [0, items) evaluated
	allItems bool
	itemSet  map[int]bool
}

func (a *annot) prop(name string) {
	if a.props == nil {
		a.props = map[string]bool{}
	}
	a.props[name] = true
}

func (a *annot) item(i int) {
	if a.itemSet == nil {
		a.itemSet = map[int]bool{}
	}
	a.itemSet[i] = true
}

func (a *annot) merge(b *annot) {
	if a == nil || b == nil {
		return
	}
	for k := range b.props {
		a.prop(k)
	}
	a.allProps = a.allProps || b.allProps
	a.items = max(a.items, b.items)
	a.allItems = a.allItems || b.allItems
	for i := range b.itemSet {
		a.item(i)
	}
}

func newAnnot(parent *annot) *annot {
	if parent == nil {
		return nil
	}
	return &annot{}
}

type validator struct {
	probs   []Problem
	quiet   int // > 0 while only a verdict is wanted
	steps   int
	depth   int
	scope   []*resource
	aborted string
	abortAt *loc
}

func (v *validator) report(at *loc, format string, args ...any) {
	if v.quiet > 0 {
		return
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	v.probs = append(v.probs, Problem{Path: at.pointer(), Message: msg})
}

func (v *validator) abort(at *loc, msg string) {
	if v.aborted == "" {
		v.aborted, v.abortAt = msg, at
	}
}

// validate reports whether inst is valid against n. ann, when not nil,
// receives the properties and items n evaluated.
func (v *validator) validate(n *node, inst any, at *loc, ann *annot) bool {
	if v.aborted != "" {
		return false
	}
	if v.steps++; v.steps > maxSteps {
		v.abort(at, "validation gave up: the schema takes too many steps to check")
		return false
	}
	if v.depth++; v.depth > maxDepth {
		v.depth--
		v.abort(at, "validation gave up: the schema or the value nests too deeply")
		return false
	}
	defer func() { v.depth-- }()
	if n.always != nil {
		if !*n.always {
			v.report(at, "not allowed here")
			return false
		}
		return true
	}
	if len(v.scope) == 0 || v.scope[len(v.scope)-1] != n.res {
		v.scope = append(v.scope, n.res)
		defer func() { v.scope = v.scope[:len(v.scope)-1] }()
	}
	quick := v.quiet > 0
	ok := v.validateValue(n, inst, at, quick)
	if !ok && quick {
		return false
	}
	fail := func() bool {
		ok = false
		return quick
	}

	local := ann
	if n.needAnnot {
		local = &annot{}
	}
	if !v.validateApplicators(n, inst, at, local, quick) && fail() {
		return false
	}

	switch x := inst.(type) {
	case map[string]any:
		if !v.validateObject(n, x, at, local) && fail() {
			return false
		}
	case []any:
		if !v.validateArray(n, x, at, local) && fail() {
			return false
		}
	}
	if n.needAnnot && ann != nil && ok {
		ann.merge(local)
	}
	return ok
}

// validateValue checks what any instance must be (type, enum, const) and
// the keywords of strings and numbers. Quick stops at the first failure.
func (v *validator) validateValue(n *node, inst any, at *loc, quick bool) bool {
	ok := true
	fail := func() bool {
		ok = false
		return quick
	}
	if n.types != 0 && !typeOK(n.types, inst) {
		v.report(at, "got %s, want %s", jsonType(inst), wantTypes(n.types))
		if fail() {
			return false
		}
	}
	if n.hasEnm {
		found := false
		for _, e := range n.enum {
			if equal(e, inst) {
				found = true
				break
			}
		}
		if !found {
			v.report(at, "value must be %s", oneOf(n.enum))
			if fail() {
				return false
			}
		}
	}
	if n.hasCst && !equal(n.cnst, inst) {
		v.report(at, "value must be %s", display(n.cnst))
		if fail() {
			return false
		}
	}
	switch x := inst.(type) {
	case string:
		if !v.validateString(n, x, at) && fail() {
			return false
		}
	case map[string]any, []any, bool, nil:
	default:
		if a, isNum := toNum(inst); isNum && !v.validateNumber(n, a, at) && fail() {
			return false
		}
	}
	return ok
}

// validateApplicators checks the schemas applied to the same instance:
// $ref, $dynamicRef, allOf, anyOf, oneOf, not, if/then/else. Quick stops
// at the first failure.
func (v *validator) validateApplicators(n *node, inst any, at *loc, local *annot, quick bool) bool {
	ok := true
	fail := func() bool {
		ok = false
		return quick
	}
	if n.ref != nil {
		if !v.validate(n.ref, inst, at, local) && fail() {
			return false
		}
	}
	if n.dynRef != nil {
		if !v.validate(v.dynamicTarget(n), inst, at, local) && fail() {
			return false
		}
	}
	for _, s := range n.allOf {
		if !v.validate(s, inst, at, local) && fail() {
			return false
		}
	}
	if len(n.anyOf) > 0 && !v.matchAnyOf(n, inst, at, local) && fail() {
		return false
	}
	if len(n.oneOf) > 0 && !v.matchOneOf(n, inst, at, local) && fail() {
		return false
	}
	if n.not != nil && !v.matchNot(n, inst, at) && fail() {
		return false
	}
	if n.ifS != nil && !v.matchIf(n, inst, at, local) && fail() {
		return false
	}
	return ok
}

// matchAnyOf passes when some schema of anyOf matches; the problems of those
// that did not are then dropped.
func (v *validator) matchAnyOf(n *node, inst any, at *loc, local *annot) bool {
	mark := len(v.probs)
	matched := false
	for _, s := range n.anyOf {
		b := newAnnot(local)
		if v.validate(s, inst, at, b) {
			matched = true
			local.merge(b)
			if local == nil {
				break
			}
		}
	}
	if matched {
		v.probs = v.probs[:mark]
	}
	return matched
}

// matchOneOf passes when exactly one schema of oneOf matches.
func (v *validator) matchOneOf(n *node, inst any, at *loc, local *annot) bool {
	mark := len(v.probs)
	var matched []int
	for i, s := range n.oneOf {
		b := newAnnot(local)
		if v.validate(s, inst, at, b) {
			matched = append(matched, i)
			local.merge(b)
			if len(matched) > 1 {
				break
			}
		}
	}
	switch len(matched) {
	case 0:
		return false
	case 1:
		v.probs = v.probs[:mark]
		return true
	default:
		v.probs = v.probs[:mark]
		v.report(at, "value matches more than one schema of oneOf (#%d and #%d)", matched[0], matched[1])
		return false
	}
}

// matchNot passes when the schema in not does not match.
func (v *validator) matchNot(n *node, inst any, at *loc) bool {
	v.quiet++
	matched := v.validate(n.not, inst, at, nil)
	v.quiet--
	if matched {
		v.report(at, "value must not match the schema in 'not'")
	}
	return !matched
}

// matchIf applies then or else by whether the instance matches if.
func (v *validator) matchIf(n *node, inst any, at *loc, local *annot) bool {
	b := newAnnot(local)
	v.quiet++
	cond := v.validate(n.ifS, inst, at, b)
	v.quiet--
	if cond {
		local.merge(b)
		if n.thenS != nil && !v.validate(n.thenS, inst, at, local) {
			return false
		}
	} else if n.elseS != nil && !v.validate(n.elseS, inst, at, local) {
		return false
	}
	return true
}

// dynamicTarget resolves a $dynamicRef (or $recursiveRef) against the
// dynamic scope: the outermost resource declaring the same dynamic anchor.
func (v *validator) dynamicTarget(n *node) *node {
	t := n.dynRef
	if n.recursiveRef {
		if !t.res.recursiveAnchor || t.res.ptr != t.ptr {
			return t
		}
		for _, r := range v.scope {
			if r.recursiveAnchor {
				if root := rootNode(r); root != nil {
					return root
				}
			}
		}
		return t
	}
	if n.dynName == "" || t.res.dynNodes[n.dynName] != t {
		return t
	}
	for _, r := range v.scope {
		if d, ok := r.dynNodes[n.dynName]; ok {
			return d
		}
	}
	return t
}

// rootNode is the root of a resource with $recursiveAnchor (2019-09).
func rootNode(r *resource) *node { return r.root }

func (v *validator) validateString(n *node, s string, at *loc) bool {
	ok := true
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLength >= 0 && l < n.minLength {
			v.report(at, "must be at least %d %s long", n.minLength, plural(n.minLength, "character", "characters"))
			ok = false
		}
		if n.maxLength >= 0 && l > n.maxLength {
			v.report(at, "must be at most %d %s long", n.maxLength, plural(n.maxLength, "character", "characters"))
			ok = false
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		v.report(at, "%s does not match pattern %s", quote(s), quote(n.patternSrc))
		ok = false
	}
	if n.format != "" {
		if msg := FormatProblem(n.format, s); msg != "" {
			v.report(at, "%s", msg)
			ok = false
		}
	}
	return ok
}

func (v *validator) validateNumber(n *node, a num, at *loc) bool {
	ok := true
	if n.minimum != nil && cmpNum(a, n.minimum.n) < 0 {
		v.report(at, "must be >= %s", n.minimum.text)
		ok = false
	}
	if n.maximum != nil && cmpNum(a, n.maximum.n) > 0 {
		v.report(at, "must be <= %s", n.maximum.text)
		ok = false
	}
	if n.exclMin != nil && cmpNum(a, n.exclMin.n) <= 0 {
		v.report(at, "must be > %s", n.exclMin.text)
		ok = false
	}
	if n.exclMax != nil && cmpNum(a, n.exclMax.n) >= 0 {
		v.report(at, "must be < %s", n.exclMax.text)
		ok = false
	}
	if n.multipleOf != nil && !multipleOf(a, n.multipleOf.n) {
		v.report(at, "must be a multiple of %s", n.multipleOf.text)
		ok = false
	}
	return ok
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateObject checks the keywords of objects, one group at a time.
// Quick (inside not, if, contains…) stops at the first failure.
func (v *validator) validateObject(n *node, obj map[string]any, at *loc, ann *annot) bool {
	quick := v.quiet > 0
	ok := true
	fail := func() bool {
		ok = false
		return quick
	}
	if !v.objectSize(n, obj, at, quick) && fail() {
		return false
	}
	if !v.objectRequired(n, obj, at, quick) && fail() {
		return false
	}
	for _, d := range n.depSchemas {
		if _, has := obj[d.prop]; has && !v.validate(d.sch, obj, at, ann) && fail() {
			return false
		}
	}
	if !v.objectProperties(n, obj, at, ann, quick) && fail() {
		return false
	}
	needKeys := len(n.patProps) > 0 || n.addProps != nil || n.propertyNms != nil || n.unevalProps != nil
	if !needKeys {
		return ok
	}
	keys := sortedKeys(obj)
	good, halt := v.propertyNames(n, keys, at, quick)
	if halt {
		return false
	}
	if !good && fail() {
		return false
	}
	if !v.otherProperties(n, obj, keys, at, ann, quick) && fail() {
		return false
	}
	if !v.unevaluatedProperties(n, obj, keys, at, ann, quick) && fail() {
		return false
	}
	return ok
}

// objectSize checks minProperties and maxProperties.
func (v *validator) objectSize(n *node, obj map[string]any, at *loc, quick bool) bool {
	ok := true
	if n.minProps > 0 && len(obj) < n.minProps {
		v.report(at, "must have at least %d %s", n.minProps, plural(n.minProps, "property", "properties"))
		if ok = false; quick {
			return false
		}
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		v.report(at, "must have at most %d %s", n.maxProps, plural(n.maxProps, "property", "properties"))
		ok = false
	}
	return ok
}

// objectRequired checks required and dependentRequired.
func (v *validator) objectRequired(n *node, obj map[string]any, at *loc, quick bool) bool {
	ok := true
	if len(n.required) > 0 {
		var missing []string
		for _, r := range n.required {
			if _, has := obj[r]; !has {
				missing = append(missing, r)
				if quick {
					return false
				}
			}
		}
		if len(missing) > 0 {
			ok = false
			v.report(at, "missing %s %s", plural(len(missing), "property", "properties"), joinQuoted(missing))
		}
	}
	for _, d := range n.depReq {
		if _, has := obj[d.prop]; !has {
			continue
		}
		var missing []string
		for _, r := range d.req {
			if _, has := obj[r]; !has {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			v.report(at, "property %s requires %s %s", quote(d.prop), plural(len(missing), "property", "properties"), joinQuoted(missing))
			if ok = false; quick {
				return false
			}
		}
	}
	return ok
}

// objectProperties checks properties, walking whichever side is smaller:
// the schema's names or the object's keys.
func (v *validator) objectProperties(n *node, obj map[string]any, at *loc, ann *annot, quick bool) bool {
	if len(n.props) == 0 {
		return true
	}
	ok := true
	// one reports whether to go on after the property name.
	one := func(name string, s *node, val any) bool {
		if !v.validate(s, val, at.child(name), nil) {
			if ok = false; quick {
				return false
			}
		}
		if ann != nil {
			ann.prop(name)
		}
		return true
	}
	if len(n.props) <= len(obj) {
		for _, name := range n.propNames {
			if val, has := obj[name]; has && !one(name, n.props[name], val) {
				return false
			}
		}
		return ok
	}
	for _, name := range sortedKeys(obj) {
		if s, has := n.props[name]; has && !one(name, s, obj[name]) {
			return false
		}
	}
	return ok
}

// propertyNames checks each key against propertyNames. Halt is true when
// validation gave up altogether.
func (v *validator) propertyNames(n *node, keys []string, at *loc, quick bool) (ok, halt bool) {
	ok = true
	if n.propertyNms == nil {
		return ok, false
	}
	for _, k := range keys {
		v.quiet++
		good := v.validate(n.propertyNms, k, at, nil)
		v.quiet--
		if !good {
			if v.aborted != "" {
				return false, true
			}
			v.report(at, "invalid property name %s", quote(k))
			if ok = false; quick {
				return false, false
			}
		}
	}
	return ok, false
}

// otherProperties checks the keys that patternProperties and
// additionalProperties apply to.
func (v *validator) otherProperties(n *node, obj map[string]any, keys []string, at *loc, ann *annot, quick bool) bool {
	ok := true
	var extra []string
	for _, k := range keys {
		matched := false
		if _, has := n.props[k]; has {
			matched = true
		}
		for _, pp := range n.patProps {
			if pp.re.MatchString(k) {
				matched = true
				if !v.validate(pp.sch, obj[k], at.child(k), nil) {
					if ok = false; quick {
						return false
					}
				}
				if ann != nil {
					ann.prop(k)
				}
			}
		}
		if matched || n.addProps == nil {
			continue
		}
		if n.addProps.always != nil && !*n.addProps.always {
			extra = append(extra, k)
			if ok = false; quick {
				return false
			}
			continue
		}
		if !v.validate(n.addProps, obj[k], at.child(k), nil) {
			if ok = false; quick {
				return false
			}
		}
		if ann != nil {
			ann.prop(k)
		}
	}
	if len(extra) > 0 {
		v.report(at, "additional %s %s not allowed", plural(len(extra), "property", "properties"), joinQuoted(extra))
	}
	return ok
}

// unevaluatedProperties checks the keys no other subschema evaluated.
func (v *validator) unevaluatedProperties(n *node, obj map[string]any, keys []string, at *loc, ann *annot, quick bool) bool {
	if n.unevalProps == nil || ann.allProps {
		return true
	}
	ok := true
	var extra []string
	for _, k := range keys {
		if ann.props[k] {
			continue
		}
		if n.unevalProps.always != nil && !*n.unevalProps.always {
			extra = append(extra, k)
			if ok = false; quick {
				return false
			}
			continue
		}
		if !v.validate(n.unevalProps, obj[k], at.child(k), nil) {
			if ok = false; quick {
				return false
			}
		}
	}
	if len(extra) > 0 {
		v.report(at, "%s %s not allowed", plural(len(extra), "property", "properties"), joinQuoted(extra))
	}
	ann.allProps = true
	return ok
}

// validateArray checks the keywords of arrays, one group at a time.
// Quick (inside not, if, contains…) stops at the first failure.
func (v *validator) validateArray(n *node, arr []any, at *loc, ann *annot) bool {
	quick := v.quiet > 0
	ok := true
	fail := func() bool {
		ok = false
		return quick
	}
	if !v.arraySize(n, arr, at, quick) && fail() {
		return false
	}
	if !v.uniqueItems(n, arr, at) && fail() {
		return false
	}
	if !v.arrayItems(n, arr, at, ann, quick) && fail() {
		return false
	}
	if !v.arrayContains(n, arr, at, ann) && fail() {
		return false
	}
	if !v.unevaluatedItems(n, arr, at, ann, quick) && fail() {
		return false
	}
	return ok
}

// arraySize checks minItems and maxItems.
func (v *validator) arraySize(n *node, arr []any, at *loc, quick bool) bool {
	ok := true
	if len(arr) < n.minItems {
		v.report(at, "must have at least %d %s", n.minItems, plural(n.minItems, "item", "items"))
		if ok = false; quick {
			return false
		}
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		v.report(at, "must have at most %d %s", n.maxItems, plural(n.maxItems, "item", "items"))
		ok = false
	}
	return ok
}

// uniqueItems reports the first two equal items.
func (v *validator) uniqueItems(n *node, arr []any, at *loc) bool {
	if !n.uniqueItems || len(arr) <= 1 {
		return true
	}
	seen := make(map[string]int, len(arr))
	var b strings.Builder
	for i, e := range arr {
		b.Reset()
		canon(&b, e)
		if j, dup := seen[b.String()]; dup {
			v.report(at, "items at %d and %d are equal", j, i)
			return false
		}
		seen[b.String()] = i
	}
	return true
}

// arrayItems checks prefixItems and items (or items and additionalItems
// before 2020-12).
func (v *validator) arrayItems(n *node, arr []any, at *loc, ann *annot, quick bool) bool {
	ok := true
	for i, s := range n.prefix {
		if i >= len(arr) {
			break
		}
		if !v.validate(s, arr[i], at.child(strconv.Itoa(i)), nil) {
			if ok = false; quick {
				return false
			}
		}
	}
	if ann != nil {
		ann.items = max(ann.items, min(len(n.prefix), len(arr)))
	}
	if n.rest == nil || len(arr) <= len(n.prefix) {
		return ok
	}
	if n.rest.always != nil && !*n.rest.always {
		if len(n.prefix) == 0 {
			v.report(at, "must be empty")
		} else {
			v.report(at, "must have at most %d %s", len(n.prefix), plural(len(n.prefix), "item", "items"))
		}
		if ok = false; quick {
			return false
		}
	} else {
		for i := len(n.prefix); i < len(arr); i++ {
			if !v.validate(n.rest, arr[i], at.child(strconv.Itoa(i)), nil) {
				if ok = false; quick {
					return false
				}
			}
		}
	}
	if ann != nil {
		ann.allItems = true
	}
	return ok
}

// arrayContains counts the items matching contains against minContains
// and maxContains.
func (v *validator) arrayContains(n *node, arr []any, at *loc, ann *annot) bool {
	if n.contains == nil {
		return true
	}
	count := 0
	v.quiet++
	for i, e := range arr {
		if v.validate(n.contains, e, at.child(strconv.Itoa(i)), nil) {
			count++
			if ann != nil {
				ann.item(i)
			}
		}
	}
	v.quiet--
	switch {
	case count < n.minContains:
		if count == 0 && n.minContains == 1 {
			v.report(at, "no item matches the schema in 'contains'")
		} else {
			v.report(at, "must have at least %d %s matching 'contains', has %d", n.minContains, plural(n.minContains, "item", "items"), count)
		}
		return false
	case n.maxContains >= 0 && count > n.maxContains:
		v.report(at, "must have at most %d %s matching 'contains', has %d", n.maxContains, plural(n.maxContains, "item", "items"), count)
		return false
	}
	return true
}

// unevaluatedItems checks the items no other subschema evaluated.
func (v *validator) unevaluatedItems(n *node, arr []any, at *loc, ann *annot, quick bool) bool {
	if n.unevalItems == nil || ann.allItems {
		return true
	}
	ok := true
	var bad []int
	for i := ann.items; i < len(arr); i++ {
		if ann.itemSet[i] {
			continue
		}
		if n.unevalItems.always != nil && !*n.unevalItems.always {
			bad = append(bad, i)
			if ok = false; quick {
				return false
			}
			continue
		}
		if !v.validate(n.unevalItems, arr[i], at.child(strconv.Itoa(i)), nil) {
			if ok = false; quick {
				return false
			}
		}
	}
	if len(bad) > 0 {
		v.report(at, "%s at %s not allowed", plural(len(bad), "item", "items"), joinInts(bad))
	}
	ann.allItems = true
	return ok
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinInts(xs []int) string {
	s := make([]string, 0, min(len(xs), 11))
	for i, x := range xs {
		if i == 10 {
			s = append(s, "…")
			break
		}
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ", ")
}

// quote puts a property name or a string in single quotes (the form pane
// finds the names in "missing property 'x'" by them).
func quote(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:77]) + "..."
	}
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}

func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// display writes a value from the schema as JSON, shortened.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

func oneOf(vals []any) string {
	if len(vals) == 1 {
		return display(vals[0])
	}
	s := make([]string, 0, min(len(vals), 21))
	for i, x := range vals {
		if i == 20 {
			s = append(s, "…")
			break
		}
		s = append(s, display(x))
	}
	return "one of " + strings.Join(s, ", ")
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := toNum(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func typeOK(types uint8, v any) bool {
	switch v.(type) {
	case nil:
		return types&typeNull != 0
	case bool:
		return types&typeBoolean != 0
	case string:
		return types&typeString != 0
	case []any:
		return types&typeArray != 0
	case map[string]any:
		return types&typeObject != 0
	}
	a, ok := toNum(v)
	if !ok {
		return false
	}
	if types&typeNumber != 0 {
		return true
	}
	return types&typeInteger != 0 && a.isInteger()
}

func wantTypes(types uint8) string {
	var names []string
	for i, n := range typeNames {
		if types&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, " or ")
}

// equal is JSON equality: numbers by value, objects regardless of order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	na, ok := toNum(a)
	if !ok {
		return false
	}
	nb, ok := toNum(b)
	return ok && cmpNum(na, nb) == 0
}

// canon writes v so that equal values write the same.
func canon(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("n")
	case bool:
		if x {
			b.WriteString("t")
		} else {
			b.WriteString("f")
		}
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			canon(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for _, k := range sortedKeys(x) {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canon(b, x[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		if a, ok := toNum(v); ok {
			b.WriteByte('#')
			canonNum(b, a)
		} else {
			fmt.Fprintf(b, "?%v", v)
		}
	}
}

// plain reports whether v holds only what encoding/json decodes to (plus
// Go integers), so it can be validated as it is without re-encoding.
func plain(v any, depth int) bool {
	if depth > 10000 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, string, json.Number, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8:
		return true
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case []any:
		for _, e := range x {
			if !plain(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
