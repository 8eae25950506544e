"""prhub bot: weekly digests of merged pull requests for Slack and Feishu."""

__version__ = "0.1.0"
