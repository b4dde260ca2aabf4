// Package doclinks holds the test that keeps the project's Markdown pages
// (README.md, SECURITY.md, docs/, deploy/, proto/) linked: every relative
// link names a file of the repository and every #anchor a heading of its
// page, as GitHub renders them. It has no code of its own.
package doclinks
