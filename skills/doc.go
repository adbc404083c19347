// Package skills holds agent skill folders shipped with signalgate (signalgate-inbox:
// a SKILL.md and scripts over the agent inbox API). It has no Go code; its test runs the
// scripts against a running gateway.
package skills
