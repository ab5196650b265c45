# Test template written for pytest-jeval, in the place and under the names of upstream's cleaning prompts
# (prompt/clean_prompt.py); it is not upstream's text. The Chinese one is left out on purpose: the tests
# check that a missing prompt falls back to pytest-jeval's own wording and that the record says so.
clean_article_prompt_en = """TEST-CLEAN-TEMPLATE
Remove the citations from this article and return it in full:
"{article}"
"""
