package health

import (
	_ "embed"
	"strings"
	"time"
)

//go:generate go run ../../tools/gen/healthgen -out renames.txt

// revisionDates are when each HCA PRM revision reached mstflint's public
// repository: the commit dates of its register database,
// tools_layouts/adb/prm/hca/ext/register_access_table.adb (git log of that
// file in github.com/Mellanox/mstflint; source_doc_version names the Rev).
var revisionDates = map[string]string{
	"Rev 0.48": "2019-03-06", "Rev 0.51": "2020-03-01", "Rev 0.54": "2020-12-25",
	"Rev 0.56": "2021-10-03", "Rev 0.57": "2022-07-20", "Rev 0.58": "2023-01-26",
	"Rev 0.59": "2024-01-23", "Rev 0.60": "2024-07-21", "Rev 0.61": "2025-01-12",
	"Rev 0.62": "2025-07-13", "Rev 0.63": "2026-01-08", "Rev 0.64": "2026-05-13",
}

// RevisionDate returns when a PRM revision was published.
func RevisionDate(rev string) (time.Time, bool) {
	s, ok := revisionDates[rev]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

//go:embed renames.txt
var renames string

// renamesSince lists field changes, known to cxray, between revision rev
// and the newest revision it has seen, in the registers health and
// snapshots read: the fields a user of an old database may misread.
func renamesSince(rev string) []string {
	var out []string
	for _, l := range strings.Split(renames, "\n") {
		from, rest, ok := strings.Cut(l, "\t")
		if !ok || from != rev || strings.HasPrefix(l, "#") {
			continue
		}
		to, what, _ := strings.Cut(rest, "\t")
		out = append(out, "changed by "+to+": "+what)
	}
	return out
}
