package slack

import "github.com/signalgate/signalgate/reply"

// placeOf is to's slack place.
func placeOf(to reply.To) Place {
	p, err := reply.PlaceOf[Place](to)
	if err != nil {
		panic(err)
	}
	return p
}

// editPlace changes to's place with f.
func editPlace(to *reply.To, f func(*Place)) {
	p := placeOf(*to)
	f(&p)
	*to = reply.NewTo(to.Source, to.Connector, p)
}
