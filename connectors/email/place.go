package email

import (
	"errors"
	"fmt"
	"strings"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Place is where an email answer goes: the fields of an email replyTo besides source
// and connector. Mailbox and MessageID say which message; the rest is what a reply needs
// to reach its sender and thread under it, always the message's own.
type Place struct {
	Mailbox    string   `json:"mailbox,omitempty" doc:"Email mailbox it arrived in."`
	MessageID  string   `json:"messageId,omitempty" doc:"Email Message-ID answered."`
	References []string `json:"references,omitempty"`
	From       string   `json:"from,omitempty" doc:"Email sender."`
	Subject    string   `json:"subject,omitempty" doc:"Email subject."`
}

// PlaceCodec reads email places (the kinds table's row carries it).
var PlaceCodec reply.PlaceCodec = reply.Codec[Place]{}

// Key is the mailbox and the Message-ID answered.
func (p Place) Key() string { return fmt.Sprintf("%q %q", p.Mailbox, p.MessageID) }

// Describe is the mailbox and "to" the sender: "INBOX to a@b.example".
func (p Place) Describe() string {
	if p.From == "" {
		return p.Mailbox
	}
	return p.Mailbox + " to " + p.From
}

// WatchResource is the email thread's root Message-ID: the first References entry,
// else the Message-ID.
func (p Place) WatchResource() (string, bool) {
	root := p.MessageID
	if len(p.References) > 0 && strings.Trim(p.References[0], "<> ") != "" {
		root = p.References[0]
	}
	if root = bareID(root); root == "" {
		return "", false
	}
	return root, true
}

// WatchResource reads an email watch resource: a Message-ID (the conversation that
// references it), without its angle brackets.
func WatchResource(r string) (watch.Resource, error) {
	id := bareID(r)
	if id == "" || strings.ContainsAny(id, " <>") {
		return watch.Resource{}, errors.New("want a Message-ID")
	}
	return watch.Resource{Canonical: id}, nil
}

// bareID is a Message-ID without surrounding space and angle brackets: the form email
// watch resources and an item's Message-ID keys compare in.
func bareID(s string) string { return strings.Trim(strings.TrimSpace(s), "<>") }
