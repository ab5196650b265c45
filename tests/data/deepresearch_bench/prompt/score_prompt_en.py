# Test template written for pytest-jeval, in the place and under the name of upstream's prompt
# (prompt/score_prompt_en.py, generate_merged_score_prompt); it is not upstream's text.
generate_merged_score_prompt = """TEST-SCORE-TEMPLATE
Task: "{task_prompt}"
<article_1>
{article_1}
</article_1>
<article_2>
{article_2}
</article_2>
<criteria_list>
{criteria_list}
</criteria_list>
Score both articles 0-10 on every criterion; answer with JSON:
{{"comprehensiveness": [{{"criterion": "...", "article_1_score": 0, "article_2_score": 0}}], "insight": [],
"instruction_following": [], "readability": []}}
"""
