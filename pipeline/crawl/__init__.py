"""The Scrapy crawl of archived captures: spider, politeness middleware, resumable WARC output."""
