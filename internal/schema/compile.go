package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file and validate.go are a JSON Schema validator of our own. It
// understands 2020-12 (the default), 2019-09, draft-07 and, leniently,
// draft-06 and draft-04. It never fetches anything: a $ref that does not
// resolve inside the schema document is a compile error.

type draft int

const (
	draft4    draft = 4
	draft6    draft = 6
	draft7    draft = 7
	draft2019 draft = 2019
	draft2020 draft = 2020
)

// draftOf reads a $schema value; anything it does not know is 2020-12.
func draftOf(s string) draft {
	switch {
	case strings.Contains(s, "draft-03"), strings.Contains(s, "draft-04"):
		return draft4
	case strings.Contains(s, "draft-06"):
		return draft6
	case strings.Contains(s, "draft-07"):
		return draft7
	case strings.Contains(s, "2019-09"):
		return draft2019
	}
	return draft2020
}

// resource is a schema resource: the document root or a subschema with an
// $id. Relative references resolve against its base URI.
type resource struct {
	base            string
	ptr             string // JSON pointer of its root in the document
	draft           draft
	dynAnchors      map[string]string // $dynamicAnchor name → pointer
	dynNodes        map[string]*node
	recursiveAnchor bool
	root            *node // compiled root, when recursiveAnchor
}

// node is one compiled (sub)schema.
type node struct {
	ptr    string
	res    *resource
	always *bool // a boolean schema

	types  uint8 // bitmask of type*; 0 when unconstrained
	enum   []any
	hasEnm bool
	cnst   any
	hasCst bool

	minimum, maximum, exclMin, exclMax *limit
	multipleOf                         *limit

	minLength, maxLength int // -1 when absent
	pattern              *regexp.Regexp
	patternSrc           string
	format               string // asserted (draft-07 and older, or AssertFormats)

	prefix      []*node
	rest        *node // items after prefix (items, or additionalItems)
	contains    *node
	minContains int
	maxContains int // -1 when absent
	minItems    int
	maxItems    int // -1 when absent
	uniqueItems bool

	props       map[string]*node
	propNames   []string // sorted keys of props
	patProps    []patProp
	addProps    *node
	propertyNms *node
	required    []string
	depReq      []depReq
	depSchemas  []depSchema
	minProps    int
	maxProps    int // -1 when absent

	allOf, anyOf, oneOf []*node
	not                 *node
	ifS, thenS, elseS   *node

	ref          *node
	refPtr       string
	hasRef       bool
	hasDynRef    bool
	dynRef       *node
	dynRefPtr    string
	dynName      string // fragment of $dynamicRef when it names an anchor
	recursiveRef bool   // dynRef is a 2019-09 $recursiveRef

	unevalProps *node
	unevalItems *node
	needAnnot   bool // has unevaluatedProperties or unevaluatedItems
}

type patProp struct {
	re  *regexp.Regexp
	sch *node
}

type depReq struct {
	prop string
	req  []string
}

type depSchema struct {
	prop string
	sch  *node
}

const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeInteger
	typeString
)

var typeNames = []string{"null", "boolean", "object", "array", "number", "integer", "string"}

func typeBit(name string) uint8 {
	for i, n := range typeNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// limit is a number from the schema, kept exactly.
type limit struct {
	n    num
	text string
}

type compiler struct {
	doc     any
	byURI   map[string]string    // absolute URI (with #anchor for anchors) → pointer
	scanned map[string]*resource // pointer of every known subschema → its resource
	nodes   map[string]*node
	work    []*node // nodes whose references are still to resolve
	all     []*node
	res     []*resource
	err     error
	opts    options
}

const rootURI = "mcpi:///schema.json"

func compileDoc(doc any, o options) (*node, error) {
	c := &compiler{
		opts:    o,
		doc:     doc,
		byURI:   map[string]string{},
		scanned: map[string]*resource{},
		nodes:   map[string]*node{},
	}
	d := draft2020
	if m, ok := doc.(map[string]any); ok {
		if s, ok := m["$schema"].(string); ok {
			d = draftOf(s)
		}
	}
	root := &resource{base: rootURI, ptr: "", draft: d}
	c.res = append(c.res, root)
	c.byURI[rootURI] = ""
	if err := c.scan("", doc, root, 0); err != nil {
		return nil, err
	}
	n, err := c.compile("")
	if err != nil {
		return nil, err
	}
	if err := c.drain(); err != nil {
		return nil, err
	}
	for _, r := range c.res {
		for name, p := range r.dynAnchors {
			dn, err := c.compile(p)
			if err != nil {
				return nil, err
			}
			if r.dynNodes == nil {
				r.dynNodes = map[string]*node{}
			}
			r.dynNodes[name] = dn
		}
		if r.recursiveAnchor {
			if r.root, err = c.compile(r.ptr); err != nil {
				return nil, err
			}
		}
	}
	// Compiling the dynamic anchors may have queued more references.
	if err := c.drain(); err != nil {
		return nil, err
	}
	if err := c.checkCycles(); err != nil {
		return nil, err
	}
	return n, nil
}

// drain resolves the queued references, compiling their targets.
func (c *compiler) drain() error {
	for len(c.work) > 0 {
		w := c.work[len(c.work)-1]
		c.work = c.work[:len(c.work)-1]
		var err error
		if w.hasRef && w.ref == nil {
			if w.ref, err = c.compile(w.refPtr); err != nil {
				return err
			}
		}
		if w.hasDynRef && w.dynRef == nil {
			if w.dynRef, err = c.compile(w.dynRefPtr); err != nil {
				return err
			}
		}
	}
	return nil
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func unescapeToken(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

func resolveURI(base, ref string) (string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if r.IsAbs() {
		r.Fragment, r.RawFragment = "", ""
		return r.String(), nil
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u := b.ResolveReference(r)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

const maxSchemaDepth = 2000

// scan walks the document to learn every $id, $anchor and $dynamicAnchor
// before any reference is resolved.
func (c *compiler) scan(ptr string, v any, res *resource, depth int) error {
	if depth > maxSchemaDepth {
		if len(ptr) > 120 {
			ptr = ptr[:60] + "…" + ptr[len(ptr)-40:]
		}
		return fmt.Errorf("schema nested more than %d levels deep at %q", maxSchemaDepth, ptr)
	}
	m, ok := v.(map[string]any)
	if !ok {
		if _, ok := v.(bool); ok {
			c.scanned[ptr] = res
		}
		return nil
	}
	res, err := c.scanResource(ptr, m, res)
	if err != nil {
		return err
	}
	return c.scanChildren(ptr, m, res, depth)
}

// scanResource records what m declares about where it can be found: $id
// (which starts a new resource), $anchor, $dynamicAnchor and
// $recursiveAnchor. It returns the resource m belongs to.
func (c *compiler) scanResource(ptr string, m map[string]any, res *resource) (*resource, error) {
	d := res.draft
	_, hasRef := m["$ref"]
	idKey := "$id"
	if d == draft4 {
		idKey = "id"
	}
	if id, ok := m[idKey].(string); ok && !(hasRef && d <= draft7) {
		base, frag, _ := strings.Cut(id, "#")
		if base != "" {
			abs, err := resolveURI(res.base, base)
			if err != nil {
				return nil, fmt.Errorf("bad %s %q: %v", idKey, id, err)
			}
			nd := d
			if s, ok := m["$schema"].(string); ok {
				nd = draftOf(s)
			}
			res = &resource{base: abs, ptr: ptr, draft: nd}
			c.res = append(c.res, res)
			if _, dup := c.byURI[abs]; !dup {
				c.byURI[abs] = ptr
			}
			d = nd
		}
		if frag != "" && d <= draft7 {
			c.byURI[res.base+"#"+frag] = ptr
		}
	}
	c.scanned[ptr] = res
	if d >= draft2019 {
		if a, ok := m["$anchor"].(string); ok {
			c.byURI[res.base+"#"+a] = ptr
		}
	}
	if d >= draft2020 {
		if a, ok := m["$dynamicAnchor"].(string); ok {
			c.byURI[res.base+"#"+a] = ptr
			if res.dynAnchors == nil {
				res.dynAnchors = map[string]string{}
			}
			res.dynAnchors[a] = ptr
		}
	}
	if d == draft2019 && res.ptr == ptr {
		if b, ok := m["$recursiveAnchor"].(bool); ok && b {
			res.recursiveAnchor = true
		}
	}
	return res, nil
}

// scanChildren scans the subschemas of m: those of single schema
// keywords, of arrays of schemas and of maps of names to schemas.
func (c *compiler) scanChildren(ptr string, m map[string]any, res *resource, depth int) error {
	for k, sub := range m {
		switch k {
		case "additionalProperties", "propertyNames", "additionalItems", "contains", "not",
			"if", "then", "else", "unevaluatedProperties", "unevaluatedItems":
			if err := c.scan(ptr+"/"+escapeToken(k), sub, res, depth+1); err != nil {
				return err
			}
		case "items", "allOf", "anyOf", "oneOf", "prefixItems":
			if arr, ok := sub.([]any); ok {
				for i, e := range arr {
					if err := c.scan(ptr+"/"+k+"/"+strconv.Itoa(i), e, res, depth+1); err != nil {
						return err
					}
				}
			} else if k == "items" {
				if err := c.scan(ptr+"/"+k, sub, res, depth+1); err != nil {
					return err
				}
			}
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
			if obj, ok := sub.(map[string]any); ok {
				for name, e := range obj {
					if err := c.scan(ptr+"/"+k+"/"+escapeToken(name), e, res, depth+1); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// lookup returns the value at a document pointer.
func (c *compiler) lookup(ptr string) (any, bool) {
	v := c.doc
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapeToken(tok)
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// resourceFor finds the resource a pointer lies in.
func (c *compiler) resourceFor(ptr string) *resource {
	for {
		if r, ok := c.scanned[ptr]; ok {
			return r
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return c.res[0]
		}
		ptr = ptr[:i]
	}
}

// resolveRef turns a reference into the pointer of its target.
func (c *compiler) resolveRef(res *resource, ref string) (string, error) {
	uriPart, frag, _ := strings.Cut(ref, "#")
	abs := res.base
	if uriPart != "" {
		var err error
		if abs, err = resolveURI(res.base, uriPart); err != nil {
			return "", fmt.Errorf("bad $ref %q: %v", ref, err)
		}
	}
	root, ok := c.byURI[abs]
	if !ok {
		return "", fmt.Errorf("external $ref %q not followed", ref)
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return root, nil
	}
	if strings.HasPrefix(frag, "/") {
		p := root + frag
		if _, ok := c.lookup(p); !ok {
			return "", fmt.Errorf("$ref %q: no such location in the schema", ref)
		}
		return p, nil
	}
	p, ok := c.byURI[abs+"#"+frag]
	if !ok {
		if abs != res.base && uriPart != "" {
			return "", fmt.Errorf("external $ref %q not followed", ref)
		}
		return "", fmt.Errorf("$ref %q: no anchor %q in the schema", ref, frag)
	}
	return p, nil
}

func (c *compiler) fail(ptr, format string, args ...any) {
	if c.err == nil {
		where := ptr
		if where == "" {
			where = "the root"
		}
		c.err = fmt.Errorf("at %s: %s", where, fmt.Sprintf(format, args...))
	}
}

func (c *compiler) compile(ptr string) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	v, ok := c.lookup(ptr)
	if !ok {
		return nil, fmt.Errorf("no schema at %q", ptr)
	}
	n := &node{ptr: ptr, res: c.resourceFor(ptr), minLength: -1, maxLength: -1, maxContains: -1, maxItems: -1, maxProps: -1, minContains: 1}
	c.nodes[ptr] = n
	c.all = append(c.all, n)
	switch x := v.(type) {
	case bool:
		n.always = &x
	case map[string]any:
		c.compileObject(n, x)
	default:
		return nil, fmt.Errorf("schema at %q is %s, not an object or a boolean", orRoot(ptr), jsonType(v))
	}
	if c.err != nil {
		return nil, c.err
	}
	return n, nil
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "the root"
	}
	return ptr
}

func (c *compiler) sub(n *node, path string) *node {
	if c.err != nil {
		return nil
	}
	s, err := c.compile(n.ptr + path)
	if err != nil {
		c.err = err
		return nil
	}
	return s
}

func (c *compiler) subList(n *node, m map[string]any, k string) []*node {
	v, ok := m[k]
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		c.fail(n.ptr, "%s must be an array of schemas", k)
		return nil
	}
	out := make([]*node, len(arr))
	for i := range arr {
		out[i] = c.sub(n, "/"+k+"/"+strconv.Itoa(i))
	}
	return out
}

func (c *compiler) subMap(n *node, m map[string]any, k string) ([]string, []*node) {
	v, ok := m[k]
	if !ok {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(n.ptr, "%s must be an object", k)
		return nil, nil
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]*node, len(names))
	for i, name := range names {
		out[i] = c.sub(n, "/"+k+"/"+escapeToken(name))
	}
	return names, out
}

func (c *compiler) opt(n *node, m map[string]any, k string) *node {
	if _, ok := m[k]; !ok {
		return nil
	}
	return c.sub(n, "/"+escapeToken(k))
}

func (c *compiler) number(n *node, m map[string]any, k string) *limit {
	v, ok := m[k]
	if !ok {
		return nil
	}
	x, ok := toNum(v)
	if !ok {
		c.fail(n.ptr, "%s must be a number", k)
		return nil
	}
	return &limit{n: x, text: numText(v)}
}

func numText(v any) string {
	if s, ok := v.(json.Number); ok {
		return s.String()
	}
	return fmt.Sprint(v)
}

func (c *compiler) count(n *node, m map[string]any, k string, def int) int {
	v, ok := m[k]
	if !ok {
		return def
	}
	x, ok := toNum(v)
	if !ok || !x.isInteger() || x.sign() < 0 {
		c.fail(n.ptr, "%s must be a non-negative integer", k)
		return def
	}
	if !x.isInt || x.i > 1<<31 {
		return 1 << 31
	}
	return int(x.i)
}

func (c *compiler) regex(n *node, k, src string) *regexp.Regexp {
	re, err := compileRegexp(src)
	if err != nil {
		c.fail(n.ptr, "%s %q is not a regular expression mcpi understands: %v", k, src, err)
		return nil
	}
	return re
}

func (c *compiler) strings(n *node, v any, k string) []string {
	arr, ok := v.([]any)
	if !ok {
		c.fail(n.ptr, "%s must be an array of strings", k)
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			c.fail(n.ptr, "%s must be an array of strings", k)
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (c *compiler) compileObject(n *node, m map[string]any) {
	if c.compileRefs(n, m) {
		return
	}
	c.compileValues(n, m)
	c.compileArrays(n, m)
	c.compileProperties(n, m)
	c.compileApplicators(n, m)
}

// compileRefs takes $ref, $dynamicRef and $recursiveRef, and reports
// whether nothing else of the schema is to be compiled (an error, or a
// $ref before 2019-09, which replaces every keyword beside it).
func (c *compiler) compileRefs(n *node, m map[string]any) (stop bool) {
	d := n.res.draft
	if r, ok := m["$ref"]; ok {
		s, ok := r.(string)
		if !ok {
			c.fail(n.ptr, "$ref must be a string")
			return true
		}
		p, err := c.resolveRef(n.res, s)
		if err != nil {
			c.err = err
			return true
		}
		n.refPtr, n.hasRef = p, true
		c.work = append(c.work, n)
		if d <= draft7 {
			// Before 2019-09, $ref replaces every keyword beside it.
			return true
		}
	}
	// The dynamic reference of the draft: $dynamicRef from 2020-12,
	// $recursiveRef in 2019-09, none before.
	var dynKey string
	switch {
	case d >= draft2020:
		dynKey = "$dynamicRef"
	case d == draft2019:
		dynKey = "$recursiveRef"
	}
	if dynKey == "" {
		return false
	}
	if r, ok := m[dynKey].(string); ok {
		p, err := c.resolveRef(n.res, r)
		if err != nil {
			c.err = err
			return true
		}
		n.dynRefPtr, n.hasDynRef = p, true
		if d == draft2019 {
			n.recursiveRef = true
		} else if _, frag, _ := strings.Cut(r, "#"); frag != "" && !strings.HasPrefix(frag, "/") {
			n.dynName = frag
		}
		c.work = append(c.work, n)
	}
	return false
}

// compileValues takes the keywords of any instance (type, enum, const)
// and those of numbers and strings.
func (c *compiler) compileValues(n *node, m map[string]any) {
	c.compileAny(n, m)
	c.compileNumbers(n, m)
	c.compileStrings(n, m)
}

// compileAny takes the keywords of any instance: type, enum and const.
func (c *compiler) compileAny(n *node, m map[string]any) {
	if t, ok := m["type"]; ok {
		var names []string
		if s, ok := t.(string); ok {
			names = []string{s}
		} else {
			names = c.strings(n, t, "type")
		}
		for _, name := range names {
			b := typeBit(name)
			if b == 0 {
				c.fail(n.ptr, "unknown type %q", name)
			}
			n.types |= b
		}
	}
	if e, ok := m["enum"]; ok {
		arr, ok := e.([]any)
		if !ok {
			c.fail(n.ptr, "enum must be an array")
		}
		n.enum, n.hasEnm = arr, true
	}
	if v, ok := m["const"]; ok {
		n.cnst, n.hasCst = v, true
	}
}

// compileNumbers takes the keywords of numbers.
func (c *compiler) compileNumbers(n *node, m map[string]any) {
	n.minimum = c.number(n, m, "minimum")
	n.maximum = c.number(n, m, "maximum")
	// exclusiveMinimum/Maximum are numbers since draft-06 and booleans
	// modifying minimum/maximum in draft-04; either form is understood.
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if b, ok := v.(bool); ok {
			if b {
				if k == "exclusiveMinimum" {
					n.exclMin, n.minimum = n.minimum, nil
				} else {
					n.exclMax, n.maximum = n.maximum, nil
				}
			}
			continue
		}
		l := c.number(n, m, k)
		if k == "exclusiveMinimum" {
			n.exclMin = l
		} else {
			n.exclMax = l
		}
	}
	if n.multipleOf = c.number(n, m, "multipleOf"); n.multipleOf != nil && n.multipleOf.n.sign() <= 0 {
		c.fail(n.ptr, "multipleOf must be greater than 0")
	}
}

// compileStrings takes the keywords of strings.
func (c *compiler) compileStrings(n *node, m map[string]any) {
	d := n.res.draft
	n.minLength = c.count(n, m, "minLength", -1)
	n.maxLength = c.count(n, m, "maxLength", -1)
	if p, ok := m["pattern"]; ok {
		s, ok := p.(string)
		if !ok {
			c.fail(n.ptr, "pattern must be a string")
		} else if re, err := compileRegexp(s); err == nil {
			n.pattern, n.patternSrc = re, s
		}
		// A pattern Go's regexp cannot run (lookahead, as in the email
		// pattern zod 4 writes; \p{Extended_Pictographic}; a repeat count
		// over 1000) is not checked: the schema is valid, and refusing it
		// would leave the whole tool or elicitation unchecked or refused
		// for one string constraint. patternProperties stays strict, as
		// ignoring one could make additionalProperties refuse good names.
	}
	if f, ok := m["format"].(string); ok && (d <= draft7 || c.opts.assertFormats) {
		// santhosh-tekuri/jsonschema, which mcpi used before, asserted
		// format only for draft-07 and older (2019-09 and 2020-12 make it
		// an annotation); mcpi keeps that, for the common formats only,
		// unless the schema is compiled with AssertFormats.
		if _, ok := formats[f]; ok {
			n.format = f
		}
	}
}

// compileArrays takes the keywords of arrays.
func (c *compiler) compileArrays(n *node, m map[string]any) {
	d := n.res.draft
	// Arrays. prefixItems (2020-12) and items as an array (older drafts,
	// and leniently in 2020-12) are the tuple; the rest is items (with
	// prefixItems or as a schema) or additionalItems (after an array).
	if _, ok := m["prefixItems"]; ok {
		n.prefix = c.subList(n, m, "prefixItems")
		n.rest = c.opt(n, m, "items")
	} else if it, ok := m["items"]; ok {
		if _, isArr := it.([]any); isArr {
			n.prefix = c.subList(n, m, "items")
			n.rest = c.opt(n, m, "additionalItems")
		} else {
			n.rest = c.opt(n, m, "items")
		}
	}
	if n.prefix == nil && n.rest == nil {
		if it, ok := m["items"]; ok {
			if arr, ok := it.([]any); ok && len(arr) == 0 {
				n.rest = c.opt(n, m, "additionalItems")
			}
		}
	}
	n.contains = c.opt(n, m, "contains")
	if n.contains != nil && d >= draft2019 {
		n.minContains = c.count(n, m, "minContains", 1)
		n.maxContains = c.count(n, m, "maxContains", -1)
	}
	n.minItems = c.count(n, m, "minItems", 0)
	n.maxItems = c.count(n, m, "maxItems", -1)
	if u, ok := m["uniqueItems"]; ok {
		b, ok := u.(bool)
		if !ok {
			c.fail(n.ptr, "uniqueItems must be a boolean")
		}
		n.uniqueItems = b
	}
}

// compileProperties takes the keywords of objects.
func (c *compiler) compileProperties(n *node, m map[string]any) {
	d := n.res.draft
	// Objects.
	names, subs := c.subMap(n, m, "properties")
	if len(names) > 0 {
		n.props = make(map[string]*node, len(names))
		for i, name := range names {
			n.props[name] = subs[i]
		}
		n.propNames = names
	}
	names, subs = c.subMap(n, m, "patternProperties")
	for i, name := range names {
		if re := c.regex(n, "patternProperties", name); re != nil {
			n.patProps = append(n.patProps, patProp{re, subs[i]})
		}
	}
	n.addProps = c.opt(n, m, "additionalProperties")
	n.propertyNms = c.opt(n, m, "propertyNames")
	if r, ok := m["required"]; ok {
		if _, isBool := r.(bool); isBool && d == draft4 {
			// draft-03 style; ignored.
		} else {
			n.required = c.strings(n, r, "required")
		}
	}
	if dr, ok := m["dependentRequired"].(map[string]any); ok {
		n.depReq = append(n.depReq, c.depRequired(n, dr)...)
	}
	names, subs = c.subMap(n, m, "dependentSchemas")
	for i, name := range names {
		n.depSchemas = append(n.depSchemas, depSchema{name, subs[i]})
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		keys := make([]string, 0, len(deps))
		for k := range deps {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if arr, ok := deps[k].([]any); ok {
				n.depReq = append(n.depReq, depReq{k, c.strings(n, arr, "dependencies")})
			} else {
				n.depSchemas = append(n.depSchemas, depSchema{k, c.sub(n, "/dependencies/"+escapeToken(k))})
			}
		}
	}
	n.minProps = c.count(n, m, "minProperties", 0)
	n.maxProps = c.count(n, m, "maxProperties", -1)
}

// compileApplicators takes the keywords that combine schemas.
func (c *compiler) compileApplicators(n *node, m map[string]any) {
	d := n.res.draft
	n.allOf = c.subList(n, m, "allOf")
	n.anyOf = c.subList(n, m, "anyOf")
	n.oneOf = c.subList(n, m, "oneOf")
	n.not = c.opt(n, m, "not")
	if d >= draft7 {
		n.ifS = c.opt(n, m, "if")
		if n.ifS != nil {
			n.thenS = c.opt(n, m, "then")
			n.elseS = c.opt(n, m, "else")
		}
	}
	if d >= draft2019 {
		n.unevalProps = c.opt(n, m, "unevaluatedProperties")
		n.unevalItems = c.opt(n, m, "unevaluatedItems")
		n.needAnnot = n.unevalProps != nil || n.unevalItems != nil
	}
}

func (c *compiler) depRequired(n *node, dr map[string]any) []depReq {
	keys := make([]string, 0, len(dr))
	for k := range dr {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]depReq, 0, len(keys))
	for _, k := range keys {
		out = append(out, depReq{k, c.strings(n, dr[k], "dependentRequired")})
	}
	return out
}

// inPlace lists the subschemas that apply to the same instance location.
func (n *node) inPlace() []*node {
	var out []*node
	if n.ref != nil {
		out = append(out, n.ref)
	}
	if n.dynRef != nil {
		out = append(out, n.dynRef)
	}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, s := range []*node{n.not, n.ifS, n.thenS, n.elseS} {
		if s != nil {
			out = append(out, s)
		}
	}
	for _, d := range n.depSchemas {
		out = append(out, d.sch)
	}
	return out
}

// checkCycles refuses schemas whose references loop without moving into
// the instance ({"$ref": "#"}): validating them could never end.
func (c *compiler) checkCycles() error {
	const (
		white = iota
		grey
		black
	)
	color := make(map[*node]int, len(c.all))
	type frame struct {
		n    *node
		next []*node
	}
	for _, start := range c.all {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, start.inPlace()}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.next) == 0 {
				color[top.n] = black
				stack = stack[:len(stack)-1]
				continue
			}
			nx := top.next[0]
			top.next = top.next[1:]
			switch color[nx] {
			case grey:
				return fmt.Errorf("invalid schema: $ref cycle through %s", orRoot(nx.ptr))
			case white:
				color[nx] = grey
				stack = append(stack, frame{nx, nx.inPlace()})
			}
		}
	}
	return nil
}

// compileRegexp compiles an ECMA-262 pattern as a Go regexp, translating
// the differences that are only spelling (\uXXXX, \/).
func compileRegexp(src string) (*regexp.Regexp, error) {
	if strings.Contains(src, `\u`) || strings.Contains(src, `\/`) {
		var b strings.Builder
		for i := 0; i < len(src); i++ {
			if src[i] == '\\' && i+1 < len(src) {
				switch {
				case src[i+1] == 'u' && i+2 < len(src) && src[i+2] == '{':
					// \u{1F600}, the u-flag escape.
					if j := strings.IndexByte(src[i+3:], '}'); j > 0 && j <= 6 && isHex(src[i+3:i+3+j]) {
						b.WriteString(`\x{` + src[i+3:i+3+j] + `}`)
						i += 3 + j
						continue
					}
				case src[i+1] == 'u' && i+6 <= len(src) && isHex(src[i+2:i+6]):
					b.WriteString(`\x{` + src[i+2:i+6] + `}`)
					i += 5
					continue
				case src[i+1] == '/':
					b.WriteByte('/')
					i++
					continue
				}
				b.WriteString(src[i : i+2])
				i++
				continue
			}
			b.WriteByte(src[i])
		}
		src = b.String()
	}
	return regexp.Compile(src)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// num is a JSON number: an int64 when it is one, else an exact rational,
// else (exponents too large to expand) a float64.
type num struct {
	isInt bool
	i     int64
	r     *big.Rat
	f     float64
}

const maxExp = 400

func toNum(v any) (num, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseNum(string(x))
	case float64:
		return floatNum(x), true
	case float32:
		return floatNum(float64(x)), true
	case int:
		return num{isInt: true, i: int64(x), f: float64(x)}, true
	case int64:
		return num{isInt: true, i: x, f: float64(x)}, true
	case int32:
		return num{isInt: true, i: int64(x), f: float64(x)}, true
	case int16:
		return num{isInt: true, i: int64(x), f: float64(x)}, true
	case int8:
		return num{isInt: true, i: int64(x), f: float64(x)}, true
	case uint:
		return uintNum(uint64(x)), true
	case uint64:
		return uintNum(x), true
	case uint32:
		return uintNum(uint64(x)), true
	case uint16:
		return uintNum(uint64(x)), true
	case uint8:
		return uintNum(uint64(x)), true
	}
	return num{}, false
}

func uintNum(u uint64) num {
	if u <= 1<<63-1 {
		return num{isInt: true, i: int64(u), f: float64(u)}
	}
	return num{r: new(big.Rat).SetInt(new(big.Int).SetUint64(u)), f: float64(u)}
}

func floatNum(f float64) num {
	if f == float64(int64(f)) && f > -9.2e18 && f < 9.2e18 {
		return num{isInt: true, i: int64(f), f: f}
	}
	n, ok := parseNum(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return num{f: f}
	}
	return n
}

func parseNum(s string) (num, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return num{isInt: true, i: i, f: float64(i)}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRange(err) {
		return num{}, false
	}
	// Expanding 1e1000000000 exactly would take forever: only moderate
	// exponents and lengths are kept exact.
	if e := strings.IndexAny(s, "eE"); e >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(s[e+1:], "+"))
		if err != nil || exp > maxExp || exp < -maxExp {
			return num{f: f}, true
		}
	}
	if len(s) > 1000 {
		return num{f: f}, true
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return num{f: f}, true
	}
	if r.IsInt() && r.Num().IsInt64() {
		return num{isInt: true, i: r.Num().Int64(), f: f}, true
	}
	return num{r: r, f: f}, true
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (a num) exact() bool { return a.isInt || a.r != nil }

func (a num) rat() *big.Rat {
	if a.r != nil {
		return a.r
	}
	return new(big.Rat).SetInt64(a.i)
}

func (a num) sign() int {
	switch {
	case a.isInt:
		switch {
		case a.i > 0:
			return 1
		case a.i < 0:
			return -1
		}
		return 0
	case a.r != nil:
		return a.r.Sign()
	case a.f > 0:
		return 1
	case a.f < 0:
		return -1
	}
	return 0
}

func (a num) isInteger() bool {
	switch {
	case a.isInt:
		return true
	case a.r != nil:
		return a.r.IsInt()
	}
	return !math.IsInf(a.f, 0) && !math.IsNaN(a.f) && math.Trunc(a.f) == a.f
}

func cmpNum(a, b num) int {
	if a.isInt && b.isInt {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	if a.exact() && b.exact() {
		return a.rat().Cmp(b.rat())
	}
	switch {
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	}
	return 0
}

func multipleOf(a, m num) bool {
	if a.isInt && m.isInt {
		return a.i%m.i == 0
	}
	if a.exact() && m.exact() {
		return new(big.Rat).Quo(a.rat(), m.rat()).IsInt()
	}
	q := a.f / m.f
	return !math.IsInf(q, 0) && !math.IsNaN(q) && math.Trunc(q) == q
}

// canonNum writes a number so that equal numbers write the same.
func canonNum(b *strings.Builder, a num) {
	switch {
	case a.isInt:
		b.WriteString(strconv.FormatInt(a.i, 10))
	case a.r != nil:
		if a.r.IsInt() {
			b.WriteString(a.r.Num().String())
		} else {
			b.WriteString(a.r.RatString())
		}
	default:
		b.WriteString("f")
		b.WriteString(strconv.FormatFloat(a.f, 'g', -1, 64))
	}
}
