package monitor

import "strings"

// SplitWhat splits --what values at the commas that separate items, not
// at those inside a register's index: "temp,PDDR[page_select=0,local_port=1]"
// is two items. Blank items are dropped; an unclosed bracket keeps the rest
// of the value as one item, so ParseRegister reports it whole. An item
// given twice (--what temp --what temp,counters) is kept once.
func SplitWhat(values []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, v := range values {
		depth, from := 0, 0
		for i, r := range v {
			switch r {
			case '[':
				depth++
			case ']':
				if depth > 0 {
					depth--
				}
			case ',':
				if depth == 0 {
					add(v[from:i])
					from = i + 1
				}
			}
		}
		add(v[from:])
	}
	return out
}
