# Test templates written for pytest-jeval, in the place and under the names of upstream's FACT validation prompts
# (utils/validate.py); they are not upstream's text.
prompt_template = """TEST-VALIDATE zh
<reference>
{reference}
</reference>
<statements>
{statements}
</statements>
"""

prompt_template_en = """TEST-VALIDATE en: mark each statement supported, unsupported or unknown.
<reference>
{reference}
</reference>
<statements>
{statements}
</statements>
"""
