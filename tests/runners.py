"""A runner for tests: replies with each request's gold text (or one fixed reply) and keeps
every request it was asked."""


class Recorder:
    name = "recorder"

    def __init__(self, reply: str | None = None):
        self.requests, self.reply = [], reply

    def generate(self, requests):
        self.requests += requests
        return [self.reply if self.reply is not None else r.gold for r in requests]
