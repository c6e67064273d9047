package schema

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// formats are the values of "format" mcpi checks: where the dialect makes
// format an assertion (draft-07 and older; see compileObject), and in every
// dialect for a schema compiled with AssertFormats, as the forms and the
// CLI compile the schemas a person answers. Other formats are annotations
// and never fail.
var formats = map[string]format{
	"date-time":     {isDateTime, "a date and time, like 2025-11-25T13:45:00Z"},
	"date":          {isDate, "a date, YYYY-MM-DD"},
	"time":          {isTime, "a time, like 13:45:00Z or 13:45:00+01:00"},
	"email":         {isEmail, "an email address, like name@example.com"},
	"uri":           {isURI, "an absolute URI, like https://example.com/path"},
	"uri-reference": {isURIReference, "a URI or a relative reference, like ../path?q=1"},
	"uuid":          {isUUID, "a UUID, like 123e4567-e89b-12d3-a456-426614174000"},
	"ipv4":          {isIPv4, "an IPv4 address, like 192.0.2.1"},
	"ipv6":          {isIPv6, "an IPv6 address, like 2001:db8::1"},
	"hostname":      {isHostname, "a host name, like example.com"},
}

// format is one checked format: its test and what it expects, in words.
type format struct {
	valid func(string) bool
	want  string
}

// FormatProblem says why s is not of the named format ("" when it is, or
// when mcpi does not check that format): the one rule of the forms, the
// validator and the CLI.
func FormatProblem(name, s string) string {
	f, ok := formats[name]
	if !ok || f.valid(s) {
		return ""
	}
	return fmt.Sprintf("%s is not a valid %s: expected %s", quote(s), name, f.want)
}

// isDate: RFC 3339 full-date, YYYY-MM-DD.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// isTime: RFC 3339 full-time, hh:mm:ss[.frac](Z|±hh:mm); a leap second
// (:60) is allowed only at 23:59 UTC.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := digits(s[0:2])
	m, ok2 := digits(s[3:5])
	sec, ok3 := digits(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 60 {
		return false
	}
	rest := s[8:]
	if r, ok := strings.CutPrefix(rest, "."); ok {
		i := 0
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 0 {
			return false
		}
		rest = r[i:]
	}
	offset := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return false
		}
		offset = oh*60 + om
		if rest[0] == '+' {
			offset = -offset
		}
	default:
		return false
	}
	if sec == 60 {
		utc := ((h*60+m+offset)%(24*60) + 24*60) % (24 * 60)
		return utc == 23*60+59
	}
	return true
}

// isDateTime: RFC 3339 date-time.
func isDateTime(s string) bool {
	if len(s) < 11 || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	return isDate(s[:10]) && isTime(s[11:])
}

// isEmail: RFC 5321 mailbox, roughly: a dot-atom or quoted local part, and
// a host name or an address literal.
func isEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		if strings.ContainsAny(local[1:len(local)-1], `\"`) {
			return false
		}
	} else {
		if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
			return false
		}
		for _, c := range local {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", c)) {
				return false
			}
		}
	}
	if domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			return isIPv6(v6)
		}
		return isIPv4(ip)
	}
	return isHostname(domain)
}

func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isURI: an absolute URI (with a scheme).
func isURI(s string) bool {
	if strings.ContainsAny(s, " \\<>\"{}|^`") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

// isURIReference: a URI or a relative reference (RFC 3986 section 4.1).
func isURIReference(s string) bool {
	if strings.ContainsAny(s, " \\<>\"{}|^`") {
		return false
	}
	_, err := url.Parse(s)
	return err == nil
}

// isUUID: 8-4-4-4-12 hex digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i : i+1]) {
				return false
			}
		}
	}
	return true
}

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}
