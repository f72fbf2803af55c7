// Package errfmt formats the device-access errors of cxray in one shape:
// "pkg: op: what happened (cause); what to do next".
package errfmt

import "strings"

// Message joins the parts, leaving out empty ones.
func Message(pkg, op, detail string, cause error, hint string) string {
	var b strings.Builder
	b.WriteString(pkg)
	b.WriteString(": ")
	if op != "" {
		b.WriteString(op)
		b.WriteString(": ")
	}
	b.WriteString(detail)
	if cause != nil {
		b.WriteString(" (")
		b.WriteString(cause.Error())
		b.WriteString(")")
	}
	if hint != "" {
		b.WriteString("; ")
		b.WriteString(hint)
	}
	return b.String()
}
