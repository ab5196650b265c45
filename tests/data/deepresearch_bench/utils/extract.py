# Test templates written for pytest-jeval, in the place and under the names of upstream's FACT extraction prompts
# (utils/extract.py: prompt_template, prompt_template_en); they are not upstream's text.
prompt_template = """TEST-EXTRACT zh
{report_text}
"""

prompt_template_en = """TEST-EXTRACT en: list every cited statement as a JSON list of {{"fact", "ref_idx", "url"}}.
{report_text}
"""
