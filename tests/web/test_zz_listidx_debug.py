from tests.web.test_list_plans import *  # noqa

def test_show(stored):
    for name, params in list(views(stored).items()) + [("short", SHORT)]:
        print("=====", name, params)
        for sql in captured(params):
            print("  --", sql[:160])
            for line in plan(sql):
                print("     ", line)
