# Frontera's own strategy, copied unchanged from its repository (scrapinghub/frontera, commit
# c94beae) except for the import lines, which are marked "litecrawl:" (Frontera's modules, and
# w3lib.util and publicsuffix, deprecated/unmaintained, are replaced by tests/strategies/compat.py).
#
# Copyright (c) Frontera developers. All rights reserved. BSD 3-clause licence:
# Redistribution and use in source and binary forms, with or without modification, are permitted
# provided that the following conditions are met: 1. Redistributions of source code must retain
# the above copyright notice, this list of conditions and the following disclaimer.
# 2. Redistributions in binary form must reproduce the above copyright notice, this list of
# conditions and the following disclaimer in the documentation and/or other materials provided
# with the distribution. 3. Neither the name of Frontera nor the names of its contributors may be
# used to endorse or promote products derived from this software without specific prior written
# permission. THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY
# EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE
# COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
# EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE
# GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND
# ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE
# OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
# POSSIBILITY OF SUCH DAMAGE.

from litecrawl.strategy import States  # litecrawl: was frontera.core.components
from litecrawl.strategy import BaseCrawlingStrategy  # litecrawl: was frontera.strategy


class BasicCrawlingStrategy(BaseCrawlingStrategy):
    def read_seeds(self, stream):
        for url in stream:
            url = url.strip()
            r = self.create_request(url)
            self.schedule(r)

    def filter_extracted_links(self, request, links):
        return links

    def links_extracted(self, request, links):
        for link in links:
            if link.meta[b'state'] == States.NOT_CRAWLED:
                self.schedule(link)
                link.meta[b'state'] = States.QUEUED

    def page_crawled(self, response):
        response.meta[b'state'] = States.CRAWLED

    def request_error(self, request, error):
        request.meta[b'state'] = States.ERROR