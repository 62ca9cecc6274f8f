"""The views' tabs in French and Arabic in Chromium (issue 45; xattn/ui/tabs.py): a click on
a translated tab opens its view and writes its English name into the link, and a link made in
one language opens the same tab, translated, in another."""

from __future__ import annotations

from devtools.browser import wait_for_app

VIEW_IS = "new URLSearchParams(location.search).get('view') === {!r}"


def test_a_translated_tab_opens_its_view_and_the_link_keeps_its_english_name(app):
    page = app.page
    app.open({"lang": "fr"})
    assert page.get_by_role("tab", name="Têtes", exact=True, selected=True).count() == 1
    page.get_by_role("tab", name="Comparer", exact=True).click()
    wait_for_app(page, VIEW_IS.format("Compare"), after_runs=-1, key="compare_b")
    assert page.get_by_role("tab", name="Comparer", selected=True).count() == 1
    page.get_by_role("tab", name="Lignes", exact=True).click()
    wait_for_app(page, VIEW_IS.format("Lines"), after_runs=-1, key="lines")
    app.assert_clean()

    app.open({"lang": "ar", "view": "Lines"}, "true")                  # the same link
    wait_for_app(page, "traces && traces.length", key="lines")
    assert page.get_by_role("tab", name="الخطوط", exact=True, selected=True).count() == 1
    page.get_by_role("tab", name="الرؤوس", exact=True).click()          # the default view
    wait_for_app(page, "!new URLSearchParams(location.search).get('view') && "
                       "traces && traces.length", after_runs=-1)
    assert page.get_by_role("tab", name="الرؤوس", exact=True, selected=True).count() == 1
    app.assert_clean()
