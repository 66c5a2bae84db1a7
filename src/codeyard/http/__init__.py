"""The HTTP core the edges share (the API, the web pages, git over HTTP): routes and their matching,
the request (`Ctx`) with its authentication, bodies and parameters, replies and paging, the
refusals and downloads the API and the pages answer alike, and the bounded HTTP server."""
