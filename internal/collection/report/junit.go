package report

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// The JUnit XML report, in the Apache Ant junit task's schema (the
// JUnit.xsd of Windy Road, which Jenkins and GitLab read): one testsuite
// per collection file, one testcase per step that ran.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Time       string          `xml:"time,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Properties struct{}        `xml:"properties"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  junitSystemText `xml:"system-err"`
}

type junitSystemText struct {
	Text string `xml:",chardata"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Error     *junitProblem `xml:"error"`
	Failure   *junitProblem `xml:"failure"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitSeconds is a duration in seconds, as xs:decimal.
func junitSeconds(d time.Duration) string { return fmt.Sprintf("%.6f", d.Seconds()) }

// xmlText keeps only what XML 1.0 can hold: a server's control characters
// would make the report unreadable.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// xmlToken is a value for an xs:token attribute: one line, single spaces.
func xmlToken(s string) string { return strings.Join(strings.Fields(xmlText(s)), " ") }

// JUnit is the JUnit XML report of files, run on host.
func JUnit(files []File, host string) ([]byte, error) {
	if host == "" {
		host = "localhost"
	}
	var doc junitSuites
	for i, r := range files {
		name := xmlToken(r.File.String())
		s := junitSuite{Name: name, Package: name, ID: i, Hostname: xmlToken(host),
			Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"), Time: junitSeconds(r.Elapsed)}
		for j, st := range r.Steps {
			c := junitCase{Name: xmlToken(st.Name.String()), Classname: name, Time: junitSeconds(time.Duration(st.DurationMS * float64(time.Millisecond)))}
			var lines []string
			for _, f := range st.Failures {
				line := f.Message.String()
				if !f.Expected.IsZero() || !f.Actual.IsZero() {
					line += "\n  expected: " + f.Expected.String() + "\n  actual:   " + f.Actual.String()
				}
				lines = append(lines, line)
			}
			problem := &junitProblem{Text: xmlText(fmt.Sprintf("%s:%d\n%s", r.File, st.Line, strings.Join(lines, "\n")))}
			if len(st.Failures) > 0 {
				problem.Message = xmlText(st.Failures[0].Message.String())
			}
			switch {
			case st.OK:
			case !r.Error.IsZero() && j == len(r.Steps)-1:
				// The step the connection failed in: an error, not a
				// failed expectation.
				problem.Type, problem.Message = "connection", xmlText(r.Error.String())
				c.Error = problem
				s.Errors++
			default:
				problem.Type = "expectation"
				c.Failure = problem
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		if !r.Error.IsZero() && len(r.Steps) == 0 {
			s.SystemErr.Text = xmlText(r.Error.String())
		}
		doc.Suites = append(doc.Suites, s)
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
