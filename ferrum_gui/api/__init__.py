"""The local API page: the server the app hosts and its preferences page."""
