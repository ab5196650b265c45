# Test templates written for pytest-jeval, in the place and under the names of upstream's FACT de-duplication
# prompts (utils/deduplicate.py); they are not upstream's text.
prompt_template = """TEST-DEDUPE zh
{statements}
"""

prompt_template_en = """TEST-DEDUPE en: return the indices of the statements to keep, as a JSON list.
{statements}
"""
