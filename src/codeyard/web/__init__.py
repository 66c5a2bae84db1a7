"""The web pages behind every `web_url`: server-rendered HTML beside the API (an HTTP edge like
`api/` and `githttp/`), rendered from the same services and policies."""
