"""auditor: can a website's sitemap <lastmod> be trusted for crawl scheduling?"""

__version__ = "0.1.0"
