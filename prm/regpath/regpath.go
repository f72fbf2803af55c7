// Package regpath names the register fields cxray reads: one constant per
// field path of the built-in database (Rev 0.57), generated from
// paths.list by tools/gen/pathgen, which checks each against that
// database. adapter.FieldOf finds a path in older and newer revisions too;
// adapter's TestPathsInEveryRevision lists where a revision lacks one.
package regpath

//go:generate go run ../../tools/gen/pathgen -list paths.list -facts ../builtin/hca.facts -out zpaths.go

// Path is one generated path and the register it belongs to.
type Path struct {
	Register string
	Name     string // the constant's name
	Path     string
}
